# METADATA
# title: Filesystem rules
# description: Findings on filesystem_policy paths and binary paths.
package fullsend.rules.filesystem

import rego.v1

import data.fullsend.lib

fs_paths contains [sprintf("filesystem_policy.%s[%d]", [list, i]), list, p] if {
	some list in ["read_only", "read_write"]
	some i, p in object.get(object.get(input, "filesystem_policy", {}), list, [])
}

norm(p) := "/" if p == "/"

norm(p) := trim_suffix(p, "/") if p != "/"

system_dirs := {
	"/", "/home", "/root", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/var", "/boot",
	"/proc", "/sys", "/dev", "/opt", "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/local",
	"/usr/local/bin", "/usr/local/sbin", "/opt/fullsend",
}

# METADATA
# title: read_write on a system directory
# description: >-
#   Writable /, /home, /root, /etc, /usr or a PATH directory lets the agent
#   replace binaries other processes (and the policy's binary matching) trust.
# custom:
#   id: FS020
#   severity: deny
deny_system_dir_writable contains f if {
	some [path, list, p] in fs_paths
	list == "read_write"
	norm(p) in system_dirs
	f := lib.finding(rego.metadata.rule(), path, sprintf("%s is writable", [p]))
}

secret_segments := {".ssh", ".aws", ".kube", ".gnupg", ".docker", ".netrc", ".git-credentials", ".azure", ".config/gcloud"}

credential_store(p) if {
	some seg in split(p, "/")
	seg in secret_segments
}

credential_store(p) if contains(p, "/.config/gcloud")

credential_store(p) if regex.match(`(^|/)\.env(\.[^/]*)?$`, p)

credential_store(p) if regex.match(`\.(pem|key|p12|pfx)$`, p)

# METADATA
# title: Access to a credential store
# description: >-
#   ~/.ssh, ~/.aws, ~/.kube, .env files and private keys hold credentials the
#   agent must never read; credentials reach the sandbox only through providers.
# custom:
#   id: FS021
#   severity: deny
deny_credential_store contains f if {
	some [path, _, p] in fs_paths
	credential_store(p)
	f := lib.finding(rego.metadata.rule(), path, sprintf("%s exposes a credential store", [p]))
}

bad_path(p) := "is not absolute" if not startswith(p, "/")

bad_path(p) := "has a .. component" if {
	startswith(p, "/")
	".." in split(p, "/")
}

bad_path(p) := "is longer than 4096 bytes" if {
	startswith(p, "/")
	not ".." in split(p, "/")
	count(p) > 4096
}

all_paths contains [path, p] if some [path, _, p] in fs_paths

all_paths contains [lib.bin_path(key, i), p] if some [key, i, p] in lib.binaries

bad_refs contains [path, sprintf("path %q %s", [p, reason])] if {
	some [path, p] in all_paths
	reason := bad_path(p)
}

bad_refs contains ["filesystem_policy", sprintf("%d filesystem paths, over OpenShell's limit of 256", [count(fs_paths)])] if {
	count(fs_paths) > 256
}

# METADATA
# title: Relative, .. or over-long path
# description: >-
#   OpenShell requires absolute paths without .. components, at most 4096
#   bytes each and 256 filesystem paths in total; anything else fails to load
#   or does not match what it seems to.
# custom:
#   id: FS022
#   severity: deny
deny_bad_path contains f if {
	some [path, msg] in bad_refs
	f := lib.finding(rego.metadata.rule(), path, msg)
}
