package policycue

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadBuiltinCatalog(t *testing.T) {
	c, err := LoadCatalog(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Binaries["gh"].Paths[0]; got != "/usr/bin/gh" {
		t.Errorf("gh path = %q", got)
	}
	if got := c.Binaries["grep"].Tier; got != TierReadOnly {
		t.Errorf("grep tier = %q (default should apply)", got)
	}
	if got := c.Profiles["forge-read"].Endpoints[0].Port; got != 443 {
		t.Errorf("default port = %d", got)
	}
	if got := len(c.Profiles["package-registries"].Endpoints); got != 5 {
		t.Errorf("package-registries endpoints = %d, want 5", got)
	}
	if _, ok := c.Runtimes["claude"].Flags[TierReadOnly]; !ok {
		t.Error("claude read-only flags missing")
	}
}

func TestLoadCatalogOrg(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		wantErr []string // substrings; empty = success
	}{
		{
			name:  "adds a binary and a profile",
			files: map[string]string{"org.cue": "package catalog\nbinaries: terraform: {paths: [\"/usr/bin/terraform\"], network: true, tier: \"full\", profiles: [\"tf-registry\"]}\nprofiles: \"tf-registry\": {description: \"x\", endpoints: [{host: \"registry.terraform.io\", access: \"read-only\"}]}\n"},
		},
		{
			name:    "conflicting redefinition names both positions",
			files:   map[string]string{"gh.cue": "package catalog\n\nbinaries: gh: tier: \"full\"\n"},
			wantErr: []string{"conflicting values", "builtin:binaries.cue", "org/gh.cue:3"},
		},
		{
			name:    "misspelled field is rejected",
			files:   map[string]string{"typo.cue": "package catalog\nbinaries: jq: network_access: true\n"},
			wantErr: []string{"network_access", "org/typo.cue:2"},
		},
		{
			name:    "unknown profile reference",
			files:   map[string]string{"ref.cue": "package catalog\nbinaries: tf: {paths: [\"/usr/bin/tf\"], profiles: [\"nope\"]}\n"},
			wantErr: []string{`binaries.tf.profiles: unknown profile "nope"`},
		},
		{
			name:    "relative binary path",
			files:   map[string]string{"rel.cue": "package catalog\nbinaries: tf: {paths: [\"bin/tf\"]}\n"},
			wantErr: []string{"org/rel.cue:2"},
		},
		{
			name:    "wrong package",
			files:   map[string]string{"pkg.cue": "package other\nbinaries: tf: {paths: [\"/bin/tf\"]}\n"},
			wantErr: []string{"package"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for n, s := range tt.files {
				fsys[n] = &fstest.MapFile{Data: []byte(s)}
			}
			c, err := LoadCatalog(fsys, "org")
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := c.Binaries["terraform"]; !ok {
					t.Fatal("org binary missing")
				}
				return
			}
			if err == nil {
				t.Fatal("want error")
			}
			if !errors.Is(err, ErrCatalog) {
				t.Errorf("error %v is not ErrCatalog", err)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
		})
	}
}
