# METADATA
# title: Secret and placeholder rules
# description: Findings on literal secrets, shell variables and placeholders anywhere in the policy.
package fullsend.rules.secrets

import rego.v1

import data.fullsend.lib

# Token shapes of the credentials agents handle, and PEM private key headers.
secret_patterns := {
	"GitHub token": `gh[pousr]_[A-Za-z0-9]{36,}`,
	"GitHub fine-grained token": `github_pat_[A-Za-z0-9_]{22,}`,
	"GitLab token": `glpat-[A-Za-z0-9_-]{20,}`,
	"Slack token": `xox[abposr]-[A-Za-z0-9-]{10,}`,
	"AWS access key id": `(AKIA|ASIA)[0-9A-Z]{16}`,
	"Google API key": `AIza[0-9A-Za-z_-]{35}`,
	"Anthropic API key": `sk-ant-[A-Za-z0-9_-]{20,}`,
	"OpenAI API key": `sk-(proj-)?[A-Za-z0-9]{32,}`,
	"private key": `-----BEGIN ([A-Z]+ )?PRIVATE KEY-----`,
	"JSON web token": `eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`,
}

# secret_any is one alternation of every pattern: one regex per string
# selects the few strings worth classifying.
secret_any := concat("|", [p | some p in secret_patterns])

# doc_text is the whole document as JSON: one regex over it tells whether
# any string can match, so clean policies skip the walk. Every pattern
# matches runs of characters JSON does not escape, so this never hides a match.
doc_text := json.marshal(input)

secret_or_shell := concat("|", [secret_any, shell_var])

default suspicious := set()

# Literal fragments every secret_patterns/shell_var match contains: a few
# substring checks spare the regexes on clean documents.
hints := ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "AKIA", "ASIA", "AIza", "sk-", "-----BEGIN", "eyJ", "${"]

hinted if {
	some h in hints
	contains(doc_text, h)
}

# suspicious holds the strings that may hold a secret or a shell variable.
suspicious := lib.strings_matching(secret_or_shell) if {
	hinted
	regex.match(secret_or_shell, doc_text)
}

# Placeholders only matter with a context that says which are allowed.
placeholder_context if lib.context.runtime == true

placeholder_context if is_array(lib.context.placeholders)

default with_placeholders := set()

with_placeholders := lib.strings_matching(placeholder_re) if {
	placeholder_context
	contains(doc_text, "{{")
}

# METADATA
# title: Literal secret
# description: >-
#   A token or private key is written into the policy. Policies are baked into
#   images and logged; secrets reach the sandbox only through OpenShell providers.
# custom:
#   id: FS018
#   severity: deny
deny_literal_secret contains f if {
	some [path, v] in suspicious
	regex.match(secret_any, v)
	some kind, pattern in secret_patterns
	regex.match(pattern, v)
	f := lib.finding(rego.metadata.rule(), path, sprintf("%s in the policy", [kind]))
}

shell_var := `\$\{[^}]*\}`

shell_refs contains [path, sprintf("%q is not expanded by OpenShell", [v])] if {
	some [path, v] in suspicious
	regex.match(shell_var, v)
}

shell_refs contains [sprintf("env.%s", [name]), sprintf("sandbox env %s = %q passes a secret to an unhardened process", [name, v])] if {
	some name, v in object.get(lib.context, "env", {})
	regex.match(shell_var, v)
}

# METADATA
# title: Shell variable in the policy or sandbox env
# description: >-
#   "${...}" in a policy is never expanded by OpenShell, and in a sandbox env
#   value it hands a runner secret to every process in the sandbox. Only
#   hardened primitives (OpenShell providers) may receive secrets.
# custom:
#   id: FS019
#   severity: deny
deny_shell_variable contains f if {
	some [path, msg] in shell_refs
	f := lib.finding(rego.metadata.rule(), path, msg)
}

placeholder_re := `\{\{\s*([A-Za-z0-9_]*)\s*\}\}`

placeholders contains [path, name] if {
	some [path, v] in with_placeholders
	some m in regex.find_all_string_submatch_n(placeholder_re, v, -1)
	name := m[1]
}

unresolved contains [path, sprintf("placeholder {{%s}} is unresolved in a policy meant for run time", [name])] if {
	lib.context.runtime == true
	some [path, name] in placeholders
}

unresolved contains [path, sprintf("placeholder {{%s}} is not declared for agent %s (declared: %v)", [name, object.get(lib.context, "agent", ""), lib.context.placeholders])] if {
	not lib.context.runtime
	is_array(lib.context.placeholders)
	some [path, name] in placeholders
	not name in lib.context.placeholders
}

# METADATA
# title: Unresolved placeholder
# description: >-
#   A {{PLACEHOLDER}} is left in a policy meant for run time, or one the
#   manifest does not declare. The runner refuses to start with either.
# custom:
#   id: FS023
#   severity: deny
deny_unresolved_placeholder contains f if {
	some [path, msg] in unresolved
	f := lib.finding(rego.metadata.rule(), path, msg)
}
