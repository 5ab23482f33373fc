package yamlblock

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// viaYAMLv3 is the reference: what yaml.v3's Encoder writes with
// SetIndent(2).
func viaYAMLv3(t testing.TB, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("yaml.v3: %v", err)
	}
	if err := enc.Close(); err != nil {
		t.Fatalf("yaml.v3: %v", err)
	}
	return buf.String()
}

// check encodes v both ways: Encode either matches yaml.v3 byte for byte
// or says ErrOutsideSubset. It reports whether Encode wrote v.
func check(t testing.TB, v any) bool {
	t.Helper()
	var buf bytes.Buffer
	err := Encode(&buf, v)
	if errors.Is(err, ErrOutsideSubset) {
		return false
	}
	if err != nil {
		t.Fatalf("Encode(%#v): %v", v, err)
	}
	if want := viaYAMLv3(t, v); buf.String() != want {
		t.Fatalf("Encode(%#v):\n%s\nyaml.v3 writes:\n%s", v, buf.String(), want)
	}
	return true
}

type match struct {
	Method string            `yaml:"method,omitempty"`
	Path   string            `yaml:"path,omitempty"`
	Query  map[string]glob   `yaml:"query,omitempty"`
	Tool   *glob             `yaml:"tool,omitempty"`
	Params map[string]any    `yaml:"params,omitempty"`
	Extra  map[string]string `yaml:"extra"`
	Hidden []string          `yaml:"-"`
}

// glob mirrors openshell.QueryMatch: a Marshaler that returns a string or
// a mapping.
type glob struct {
	One string
	Any []string
}

func (g glob) MarshalYAML() (any, error) {
	if len(g.Any) > 0 {
		return map[string][]string{"any": g.Any}, nil
	}
	return g.One, nil
}

type binary struct{ Path string }

func (b binary) MarshalYAML() (any, error) {
	return struct {
		Path string `yaml:"path"`
	}{b.Path}, nil
}

type endpoint struct {
	Host  string  `yaml:"host"`
	Port  int     `yaml:"port,omitempty"`
	Ports []int   `yaml:"ports,omitempty"`
	Max   uint32  `yaml:"max,omitempty"`
	Rules []match `yaml:"rules,omitempty"`
	Flag  *bool   `yaml:"flag,omitempty"`
	On    bool    `yaml:"enabled,omitempty"`
	Creds *struct {
		Provider string `yaml:"provider"`
	} `yaml:"creds,omitempty"`
	Untagged string
	private  string
}

type doc struct {
	Version  int                 `yaml:"version"`
	FS       *fsPolicy           `yaml:"filesystem_policy,omitempty"`
	Nets     map[string]net      `yaml:"network_policies,omitempty"`
	Config   map[string]any      `yaml:"config,omitempty"`
	Empty    struct{ A string }  `yaml:"empty"`
	Nil      *fsPolicy           `yaml:"nil"`
	NilMap   map[string]string   `yaml:"nil_map"`
	NilList  []string            `yaml:"nil_list"`
	Lists    [][]string          `yaml:"lists,omitempty"`
	EmptyAny []map[string]string `yaml:"empty_any,omitempty"`
}

type fsPolicy struct {
	IncludeWorkdir bool     `yaml:"include_workdir"`
	ReadOnly       []string `yaml:"read_only"`
}

type net struct {
	Name      string     `yaml:"name"`
	Endpoints []endpoint `yaml:"endpoints"`
	Binaries  []binary   `yaml:"binaries"`
}

func TestEncodeMatchesYAMLv3(t *testing.T) {
	yes := true
	full := doc{
		Version: 1,
		FS:      &fsPolicy{ReadOnly: []string{"/usr", "/etc", "/sandbox/.claude"}},
		Nets: map[string]net{
			"api_github_com_443_graphql": {Name: "b"},
			"api_github_com_443": {Name: "api-github-com-443", Endpoints: []endpoint{{
				Host: "api.github.com", Port: 443, Max: 7, Flag: &yes, On: true, Untagged: "x", private: "y",
				Creds: &struct {
					Provider string `yaml:"provider"`
				}{"github"},
				Rules: []match{
					{Method: "GET", Path: "/repos/{{OWNER}}/{{REPO_NAME}}/**", Query: map[string]glob{
						"q": {One: "repo:{{OWNER}}/{{REPO_NAME}}*"}, "per_page": {Any: []string{"*", "all"}},
					}},
					{Method: "POST", Tool: &glob{One: "search"}, Params: map[string]any{"nested": map[string]any{"k": "v"}}},
					{Extra: map[string]string{}},
				},
			}}, Binaries: []binary{{"/usr/bin/gh"}, {"**/curl"}}},
			"agent-10": {Name: "ten", Endpoints: []endpoint{{Host: "*.example.com", Ports: []int{443, 8443}}}},
			"agent-9":  {Name: "nine", Endpoints: []endpoint{}},
		},
		Config:   map[string]any{"list": []any{"a", 1, true, nil}, "empty": map[string]any{}, "none": []any{}},
		EmptyAny: []map[string]string{{}, {"a": "b"}},
	}
	for name, v := range map[string]any{
		"policy shape":   full,
		"pointer":        &full,
		"empty struct":   struct{}{},
		"empty map":      map[string]string{},
		"scalar":         "plain",
		"nested lists":   doc{Lists: [][]string{{}, {}}},
		"marshaler list": []glob{{One: "a"}},
	} {
		t.Run(name, func(t *testing.T) { check(t, v) })
	}
	// What a compiled policy holds must take the fast path.
	for name, v := range map[string]any{"policy shape": full, "empty struct": struct{}{}} {
		if !check(t, v) {
			t.Errorf("%s: Encode refused a value in its subset", name)
		}
	}
	// What it cannot write exactly it refuses.
	for name, v := range map[string]any{
		"float":       map[string]any{"f": 1.5},
		"nested list": doc{Lists: [][]string{{"a"}}},
		"int keys":    map[int]string{1: "a"},
		"top list":    []string{"a"},
		"number-like": map[string]string{"v": "10.0.0.0/8"},
		"folded":      map[string]string{"v": strings.Repeat("word ", 20) + "end"},
		"long key":    map[string]string{strings.Repeat("k", 129): "v"},
		"node":        map[string]any{"n": yaml.Node{Kind: yaml.ScalarNode, Value: "x"}},
		"inline": struct {
			M map[string]string `yaml:",inline"`
		}{},
	} {
		var buf bytes.Buffer
		if err := Encode(&buf, v); !errors.Is(err, ErrOutsideSubset) {
			t.Errorf("%s: Encode = %v, want ErrOutsideSubset", name, err)
		}
	}
}

// TestScalarStylesExhaustive encodes every string of up to three characters
// over an alphabet of YAML's indicators, signs, digits and the letters that
// start its keywords, as a value, a key and a sequence item, plus the
// keywords themselves: each is either refused or written as yaml.v3 writes
// it.
func TestScalarStylesExhaustive(t *testing.T) {
	alphabet := []string{"a", "y", "N", "o", "t", "0", "1", "-", "+", ".", ":", "#", "'", "\"", "{", "}",
		"[", ",", "?", "*", "&", "!", "|", ">", "%", "@", "`", "~", "/", "<", "=", " ", "\\", "é"}
	if testing.Short() {
		alphabet = alphabet[:16]
	}
	words := []string{"", "true", "True", "TRUE", "tRUE", "false", "null", "Null", "NULL", "nULL", "yes", "Yes", "YES", "yEs",
		"no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "y", "Y", "n", "N", "~", "<<", ".inf", "---", "...",
		"---x", "...x", "--", "..", "a:b", "a:", "a: b", "a #b", "a#b", "x'y", "**/curl", "{{HOST_IP}}", "/repos/{{OWNER}}",
		"repo:{{OWNER}}/*", strings.Repeat("x", 200), "repo:{{OWNER}}/{{REPO_NAME}} {*,*.**}", " a", "a ", "a  b",
		"a :b", "a: b", "? a", ": a", "a #b", "a# b", "'a b'", "-x", "+x", "2001-12-14", "1:20", "0x1F", "0o17", "1e3"}
	strs := append([]string{}, words...)
	for _, a := range alphabet {
		strs = append(strs, a)
		for _, b := range alphabet {
			strs = append(strs, a+b)
			for _, c := range alphabet {
				strs = append(strs, a+b+c)
			}
		}
	}
	// Strings with spaces fold past column 80: probe lengths around it.
	for n := 60; n < 100; n++ {
		for _, at := range []int{n / 2, n - 2} {
			b := []byte(strings.Repeat("x", n))
			b[at] = ' '
			strs = append(strs, string(b), "'"+string(b))
		}
	}
	type nested struct {
		Deeper map[string][]string `yaml:"deeper"`
	}
	type probe struct {
		V string              `yaml:"v"`
		K map[string]int      `yaml:"k"`
		L []string            `yaml:"l"`
		N []map[string]nested `yaml:"nest"`
	}
	written := 0
	for _, s := range strs {
		if check(t, probe{V: s, K: map[string]int{s: 1}, L: []string{s},
			N: []map[string]nested{{"key": {Deeper: map[string][]string{"list": {s}}}}}}) {
			written++
		}
	}
	if written < len(strs)/4 {
		t.Errorf("Encode wrote %d of %d probes; the fast path is too narrow", written, len(strs))
	}
}

// TestKeyOrderMatchesYAMLv3 sorts keys that mix letters, digits, runs of
// zeros and punctuation as yaml.v3's natural order does.
func TestKeyOrderMatchesYAMLv3(t *testing.T) {
	keys := []string{"agent-10", "agent-9", "agent-09", "agent-009", "agent-1", "agent", "agent_x", "agentx",
		"a1b", "a01b", "a10b", "a1", "a01", "a001", "b", "B", "_x", "x_", "x-1", "x-01", "x1-",
		"api_github_com_443", "api_github_com_443_graphql", "api_github_com_80", "zz", "z0z", "z00z"}
	m := map[string]int{}
	for i, k := range keys {
		m[k] = i
	}
	if !check(t, m) {
		t.Fatal("Encode refused a string-keyed map")
	}
	// Keys that start with a digit are refused (they may resolve to
	// numbers), but the order is still yaml.v3's.
	for _, k := range []string{"agent-10", "agent-9", "a01"} {
		for _, l := range []string{"10", "9", "09", "009", "_"} {
			if yamlKeyLess(k, l) == yamlKeyLess(l, k) {
				t.Errorf("yamlKeyLess(%q, %q) and its reverse agree", k, l)
			}
		}
	}
}

func FuzzEncode(f *testing.F) {
	f.Add("api.github.com", "/repos/{{OWNER}}/**", "agent-1", "q", "*", 443)
	f.Add("'quoted'", "a: b", "---", "#", "{{X}}", 0)
	f.Add("true", "~", "10", "a:", "é", -1)
	f.Fuzz(func(t *testing.T, host, path, key, qkey, qval string, port int) {
		v := doc{
			Version: port,
			FS:      &fsPolicy{ReadOnly: []string{path, host}},
			Nets: map[string]net{key: {Name: key, Endpoints: []endpoint{{
				Host: host, Port: port, Rules: []match{{Method: qval, Path: path,
					Query: map[string]glob{qkey: {One: qval}, key: {Any: []string{qval, path}}}}},
			}}, Binaries: []binary{{path}}}, qkey + "x": {}},
			Config: map[string]any{qkey: map[string]any{key: qval}},
		}
		check(t, v)
	})
}
