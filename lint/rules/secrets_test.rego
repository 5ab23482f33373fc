package fullsend.rules.secrets_test

import rego.v1

import data.fullsend.rules.secrets as sec
import data.fullsend.test as t

test_fs018_literal_secret if {
	t.ids(sec.deny_literal_secret) == {"FS018"} with input as t.policy([t.ep({"host": "ghp_0123456789abcdefghijklmnopqrstuvwxyz"})], ["/usr/bin/gh"])
	t.ids(sec.deny_literal_secret) == {"FS018"} with input as t.fs(["-----BEGIN OPENSSH PRIVATE KEY-----"], [])
	t.ids(sec.deny_literal_secret) == {"FS018"} with input as t.fs(["/AKIAABCDEFGHIJKLMNOP"], [])
}

test_fs018_ordinary_strings_ok if {
	count(sec.deny_literal_secret) == 0 with input as t.clean
}

test_fs019_shell_variable if {
	t.ids(sec.deny_shell_variable) == {"FS019"} with input as t.fs(["/home/${USER}"], [])
	t.ids(sec.deny_shell_variable) == {"FS019"} with input as t.clean
		with data.fullsend.context as {"env": {"GH_TOKEN": "${GH_TOKEN}"}}
}

test_fs019_plain_env_ok if {
	count(sec.deny_shell_variable) == 0 with input as t.clean
		with data.fullsend.context as {"env": {"LANG": "C.UTF-8"}}
}

placeholder_policy := t.fs(["/repos/{{OWNER}}/{{ REPO_NAME }}"], [])

test_fs023_unresolved_placeholder if {
	t.ids(sec.deny_unresolved_placeholder) == {"FS023"} with input as placeholder_policy
		with data.fullsend.context as {"runtime": true}
	t.ids(sec.deny_unresolved_placeholder) == {"FS023"} with input as placeholder_policy
		with data.fullsend.context as {"agent": "triage", "placeholders": ["OWNER"]}
}

test_fs023_declared_or_no_context_ok if {
	count(sec.deny_unresolved_placeholder) == 0 with input as placeholder_policy
	count(sec.deny_unresolved_placeholder) == 0 with input as placeholder_policy
		with data.fullsend.context as {"agent": "triage", "placeholders": ["OWNER", "REPO_NAME"]}
}
