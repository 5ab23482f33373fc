# METADATA
# title: Secret and placeholder rules
# description: Findings on literal secrets, shell variables and placeholders anywhere in the policy.
package fullsend.rules.secrets

import rego.v1

import data.fullsend.lib
import data.fullsend.lib.secretrules as sr

# doc_text is the whole document as JSON: one substring check on it spares
# the walks for "${" and "{{" on documents without them.
doc_text := json.marshal(input)

# Literal secrets: the rule set of secretscan (data in secretrules.rego,
# generated from Go), applied the way the Go scanner applies it to every
# string: normalised (invisible characters removed), then once more with
# white space removed by the joinable rules. A rule runs when one of its
# keywords is in the lowercased string, its regex matches, the secret
# (capture group) is above its entropy threshold and no allowlist takes it.

# texts holds every string of the document as [path, normalised value].
texts := [[p, n] |
	walk(input, [p, v])
	is_string(v)
	n := regex.replace(v, sr.ignorable, "")
]

# joined_texts holds the strings that have white space, without it.
joined_texts := [[p, j] |
	some [p, n] in texts
	j := regex.replace(n, sr.space, "")
	j != n
]

# A keyword anywhere in the document selects the rules worth trying; each
# string is checked for a keyword of the rule again when its regex matches.
candidates contains i if {
	text := lower(concat("\n", [n | some [_, n] in texts]))
	some k, rules in sr.keyword_rules
	contains(text, k)
	some i in rules
}

candidates contains i if {
	some i, r in sr.rules
	count(r.keywords) == 0
}

joined_candidates contains i if {
	count(joined_texts) > 0
	text := lower(concat("\n", [j | some [_, j] in joined_texts]))
	some k, rules in sr.joinable_keyword_rules
	contains(text, k)
	some i in rules
}

joined_candidates contains i if {
	count(joined_texts) > 0
	some i, r in sr.rules
	r.joinable
	count(r.keywords) == 0
}

candidate(r, _) if count(r.keywords) == 0

candidate(r, text) if {
	some k in r.keywords
	contains(text, k)
}

# literal_secrets holds [path, kind] for every string a rule fires on: the
# engine's Go scan of the same rules (lib.facts) when there is one, else the
# Rego scan below (conftest, opa). TestSecretScanMatchesRego keeps them equal.
literal_secrets := {[p, k] |
	some p, kinds in lib.facts.literal_secrets
	some k in kinds
} if {
	lib.facts.literal_secrets
} else := scanned_secrets

scanned_secrets contains [lib.render_path(p), r.id] if {
	some i in candidates
	r := sr.rules[i]
	some [p, n] in texts
	fires(r, n)
}

scanned_secrets contains [lib.render_path(p), r.id] if {
	some i in joined_candidates
	r := sr.rules[i]
	some [p, j] in joined_texts
	fires(r, j)
}

fires(r, s) if {
	regex.match(r.regex, s)
	candidate(r, lower(s))
	some m in regex.find_all_string_submatch_n(r.regex, s, -1)
	match := trim(m[0], "\n")
	secret := secret_of(r, match)
	entropy_ok(r, secret)
	not allowed(r, secret, match, line_of(s, m[0]))
}

# secret_of picks the secret out of a match: the rule's capture group, or
# the first non-empty one, or the whole match.
secret_of(r, match) := match if count(groups(r, match)) < 2

secret_of(r, match) := groups(r, match)[r.secret_group] if {
	count(groups(r, match)) >= 2
	r.secret_group > 0
}

secret_of(r, match) := first_group(groups(r, match), match) if {
	count(groups(r, match)) >= 2
	r.secret_group == 0
}

groups(r, match) := ms[0] if {
	ms := regex.find_all_string_submatch_n(r.regex, match, 1)
	count(ms) > 0
} else := []

first_group(g, match) := xs[0] if {
	xs := [x | some i, x in g; i > 0; x != ""]
	count(xs) > 0
} else := match

# line_of returns the line(s) of s around the first occurrence of match.
line_of(s, match) := concat("", [before[count(before) - 1], match, after[0]]) if {
	i := indexof(s, match)
	before := split(substring(s, 0, i), "\n")
	after := split(substring(s, i + count(match), -1), "\n")
}

entropy_ok(r, _) if r.entropy == 0

entropy_ok(r, s) if {
	r.entropy > 0
	entropy(s) > r.entropy
}

# OPA has no logarithm: secrets longer than the table count as random.
entropy_ok(r, s) if {
	r.entropy > 0
	count(s) >= count(sr.xlog2x)
}

# entropy is the Shannon entropy of s in bits per character:
# log2(n) - sum(c log2 c)/n over the character counts c.
entropy(s) := (sr.xlog2x[n] - sum([sr.xlog2x[c] | some ch in {x | some x in chars}; c := count([1 | some x in chars; x == ch])])) / n if {
	chars := split(s, "")
	n := count(chars)
	n > 0
}

allowed(r, secret, match, line) if {
	r.global_allow
	some a in sr.global_allow
	allows(a, secret, match, line)
}

allowed(r, secret, match, line) if {
	some a in r.allow
	allows(a, secret, match, line)
}

allows(a, secret, match, line) if {
	not a.require_all
	regex_hit(a, target(a, secret, match, line))
}

allows(a, secret, _, _) if {
	not a.require_all
	stop_hit(a, secret)
}

allows(a, secret, match, line) if {
	a.require_all
	regex_ok(a, target(a, secret, match, line))
	stop_ok(a, secret)
}

target(a, secret, _, _) := secret if a.target == ""

target(a, _, match, _) := match if a.target == "match"

target(a, _, _, line) := line if a.target == "line"

regex_hit(a, t) if {
	t != ""
	some p in a.regexes
	regex.match(p, t)
}

stop_hit(a, secret) if {
	secret != ""
	l := lower(secret)
	some w in a.stop_words
	contains(l, w)
}

regex_ok(a, _) if count(a.regexes) == 0

regex_ok(a, t) if regex_hit(a, t)

stop_ok(a, _) if count(a.stop_words) == 0

stop_ok(a, secret) if stop_hit(a, secret)

# shell_strings holds [path, string] for the strings that hold a shell
# variable: from the engine's facts (lib.facts.strings), else a walk of the
# document when its text has "${" at all.
shell_strings := {[p, v] | some [p, v] in lib.facts.strings; regex.match(shell_var, v)} if {
	lib.facts.strings
} else := lib.strings_matching(shell_var) if {
	contains(doc_text, "${")
} else := set()

# Placeholders only matter with a context that says which are allowed.
placeholder_context if lib.context.runtime == true

placeholder_context if is_array(lib.context.placeholders)

with_placeholders := {[p, v] | some [p, v] in lib.facts.strings; regex.match(placeholder_re, v)} if {
	placeholder_context
	lib.facts.strings
} else := lib.strings_matching(placeholder_re) if {
	placeholder_context
	contains(doc_text, "{{")
} else := set()

# METADATA
# title: Literal secret
# description: >-
#   A token or private key is written into the policy. Policies are baked into
#   images and logged; secrets reach the sandbox only through OpenShell providers.
# custom:
#   id: FS018
#   severity: deny
deny_literal_secret contains f if {
	some path in {p | some [p, _] in literal_secrets}
	kinds := sort({k | some [q, k] in literal_secrets; q == path})
	f := lib.finding(rego.metadata.rule(), path, sprintf("literal secret in the policy (%s)", [concat(", ", kinds)]))
}

shell_var := `\$\{[^}]*\}`

shell_refs contains [path, sprintf("%q is not expanded by OpenShell", [v])] if {
	some [path, v] in shell_strings
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
