package fullsend.rules.secrets_test

import rego.v1

import data.fullsend.rules.secrets as sec
import data.fullsend.test as t

test_fs018_literal_secret if {
	t.ids(sec.deny_literal_secret) == {"FS018"} with input as t.policy([t.ep({"host": "ghp_0123456789abcdefghijklmnopqrstuvwxyz"})], ["/usr/bin/gh"])
	t.ids(sec.deny_literal_secret) == {"FS018"} with input as t.fs(["-----BEGIN OPENSSH PRIVATE KEY-----"], [])
	t.ids(sec.deny_literal_secret) == {"FS018"} with input as t.fs(["/AKIAABCDEFGHIJKLMNOP"], [])
}

# Keys are assembled from pieces so no token-shaped literal sits in the file.
anthropic_key := concat("", ["sk-ant-api03-", "Xq3vB8nK2mW7pR4tY9cL", "6hJ1dF5gS0aZ-eU_iO8yT3rE7wQ2xC4vB9nM1kL5jH6gF0dS"])

google_oauth_token := concat("", ["ya29.", "a0AfB_byC3dE4fG5hI6jK7lM8nO9pQ0rS1tU2vW3xY4z"])

hf_token := concat("", ["hf_", "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"])

docker_pat := concat("", ["dckr_pat_", "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9"])

test_fs018_sandbox_secrets if {
	t.ids(sec.deny_literal_secret) == {"FS018"} with input as t.fs([concat("", ["/opt/", anthropic_key])], [])
	t.ids(sec.deny_literal_secret) == {"FS018"} with input as t.policy([t.ep({"host": google_oauth_token})], ["/usr/bin/gh"])
	t.ids(sec.deny_literal_secret) == {"FS018"} with input as t.fs([hf_token], [])
	t.ids(sec.deny_literal_secret) == {"FS018"} with input as t.fs([docker_pat], [])
}

test_fs018_zero_width_split_secret if {
	key := concat("\u200b", [substring(anthropic_key, 0, 10), substring(anthropic_key, 10, -1)])
	t.ids(sec.deny_literal_secret) == {"FS018"} with input as t.fs([key], [])
	pat := concat("\u00ad", ["ghp_0123456789", "ABCDEFGHIJKLMNOPQRSTUVWXyz"])
	t.ids(sec.deny_literal_secret) == {"FS018"} with input as t.fs([pat], [])
}

test_fs018_newline_split_secret if {
	key := concat("\n", [substring(anthropic_key, 0, 30), substring(anthropic_key, 30, -1)])
	t.ids(sec.deny_literal_secret) == {"FS018"} with input as t.fs([key], [])
	key2 := concat("\u00a0", [substring(docker_pat, 0, 12), substring(docker_pat, 12, -1)])
	t.ids(sec.deny_literal_secret) == {"FS018"} with input as t.fs([key2], [])
}

test_fs018_ordinary_strings_ok if {
	count(sec.deny_literal_secret) == 0 with input as t.clean
	count(sec.deny_literal_secret) == 0 with input as t.fs(["/opt/disk-0123456789abcdef0123456789abcdef", "/usr/share/sk-ant-", "/home/api key token"], [])
}

test_fs018_one_finding_per_string if {
	fs := sec.deny_literal_secret with input as t.fs([concat(" ", [anthropic_key, hf_token])], [])
	count(fs) == 1
	some f in fs
	contains(f.msg, "anthropic-api-key")
	contains(f.msg, "huggingface-access-token")
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
