package verify

import (
	"strings"
	"testing"
)

// TestGitHubSummaryLiteral: a value quoted in the verify job summary (a
// tag, a signer identity, an attestation's predicate type) renders as the
// text it is: no link, image, HTML or extra table cell (ciout's Markdown
// escaper).
func TestGitHubSummaryLiteral(t *testing.T) {
	ref := "registry.example/acme/agents@sha256:" + strings.Repeat("1", 64)
	md := githubSummary(&Result{Ref: ref, PoliciesDigest: "sha256:" + strings.Repeat("2", 64),
		ResolvedTag:  "v1`|x\n",
		Signers:      []string{"[click](https://evil.example) | cell"},
		Transparency: "<img src=x onerror=alert(1)>",
		Attestations: []Attestation{{PredicateType: "![i](https://evil.example/i.png)"}}})
	for _, bad := range []string{"[click]", "](", " | cell", "v1`|x"} {
		if strings.Contains(md, bad) {
			t.Errorf("%q survived in the summary:\n%s", bad, md)
		}
	}
	for _, want := range []string{"| image | `" + ref + "` |\n", "| resolved from | ``v1`\\|x `` |\n",
		`| signer | \[click\]\(https\:\/\/evil\.example\) \| cell |`, `| transparency | \<img src\=x onerror\=alert\(1\)\> |`} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in the summary:\n%s", want, md)
		}
	}
	if rows := strings.Count(md, "\n| ") - 1; rows != 6 { // the header row is "| | |"
		t.Errorf("%d rows, want 6:\n%s", rows, md)
	}
}
