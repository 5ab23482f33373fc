package fullsend.rules.filesystem_test

import rego.v1

import data.fullsend.rules.filesystem as fs
import data.fullsend.test as t

test_fs020_system_dir_writable if {
	t.ids(fs.deny_system_dir_writable) == {"FS020"} with input as t.fs([], ["/usr/local/bin/"])
	t.ids(fs.deny_system_dir_writable) == {"FS020"} with input as t.fs([], ["/"])
}

test_fs020_read_only_system_dir_ok if {
	count(fs.deny_system_dir_writable) == 0 with input as t.fs(["/usr", "/etc"], ["/sandbox", "/tmp"])
}

test_fs021_credential_store if {
	t.ids(fs.deny_credential_store) == {"FS021"} with input as t.fs(["/home/sandbox/.aws/credentials"], [])
	t.ids(fs.deny_credential_store) == {"FS021"} with input as t.fs([], ["/sandbox/.env.local"])
	t.ids(fs.deny_credential_store) == {"FS021"} with input as t.fs(["/etc/tls/key.pem"], [])
}

test_fs021_ordinary_paths_ok if {
	count(fs.deny_credential_store) == 0 with input as t.fs(["/usr", "/sandbox/.environment-notes"], ["/sandbox"])
}

test_fs022_bad_path if {
	t.ids(fs.deny_bad_path) == {"FS022"} with input as t.fs(["usr"], [])
	t.ids(fs.deny_bad_path) == {"FS022"} with input as t.fs(["/sandbox/../etc"], [])
	t.ids(fs.deny_bad_path) == {"FS022"} with input as t.fs([concat("", ["/", concat("", [x | some _ in numbers.range(1, 4100); x := "a"])])], [])
	t.ids(fs.deny_bad_path) == {"FS022"} with input as t.policy([t.ep({})], ["gh"])
	t.ids(fs.deny_bad_path) == {"FS022"} with input as t.fs([sprintf("/d/%d", [i]) | some i in numbers.range(1, 257)], [])
}

test_fs022_any_directory_binary_glob_ok if {
	count(fs.deny_bad_path) == 0 with input as t.policy([t.ep({})], ["**/gh"])
	t.ids(fs.deny_bad_path) == {"FS022"} with input as t.policy([t.ep({})], ["*/gh"])
	t.ids(fs.deny_bad_path) == {"FS022"} with input as t.policy([t.ep({})], ["**/../gh"])
}

test_fs022_absolute_ok if {
	count(fs.deny_bad_path) == 0 with input as t.fs(["/usr", "/sandbox/..data"], ["/tmp"])
}

# Red-team regressions: non-canonical spellings are the same directory.
test_fs020_non_canonical_spellings if {
	every p in ["//etc", "/etc//", "///root", "/usr/./bin/", "/etc/.", "//"] {
		t.ids(fs.deny_system_dir_writable) == {"FS020"} with input as t.fs([], [p])
	}
}

test_fs021_non_canonical_spellings if {
	every p in ["//home/sandbox/.ssh", "/home/sandbox//.aws/", "/home/sandbox/./.kube", "/root//.env"] {
		t.ids(fs.deny_credential_store) == {"FS021"} with input as t.fs([p], [])
	}
}

# Red-team regressions: credential stores beyond ~/.ssh and ~/.aws.
test_fs021_more_credential_stores if {
	every p in [
		"/run/secrets", "/run/secrets/db_password", "/var/run/secrets",
		"/var/run/secrets/kubernetes.io/serviceaccount", "/var/run/secrets/kubernetes.io/serviceaccount/token",
		"/home/sandbox/.npmrc", "/home/sandbox/.config/gh/hosts.yml", "/home/sandbox/.config/gh",
		"/home/sandbox/.docker/config.json", "/root/.aws", "/root/.config/gcloud",
		"/root/.config/gcloud/application_default_credentials.json", "/root/.azure", "/root/.kube/config",
		"/home/sandbox/.netrc", "/home/sandbox/.git-credentials", "/home/sandbox/.pypirc",
	] {
		t.ids(fs.deny_credential_store) == {"FS021"} with input as t.fs([p], [])
	}
}

test_fs021_lookalikes_ok if {
	count(fs.deny_credential_store) == 0 with input as t.fs(["/sandbox/.npmrc-notes/x", "/run/secretsauce", "/sandbox/docker/config.json", "/usr/share/gh"], [])
}
