# METADATA
# title: Filesystem rules
# description: Findings on filesystem_policy paths and binary paths.
package fullsend.rules.filesystem

import rego.v1

import data.fullsend.lib

# fs_paths enumerates filesystem paths as [list, index, path as written,
# canonical path (lib.canonical_path)]; fs_path renders a policy path, only
# for findings.
fs_paths contains [list, i, p, lib.canonical_path(p)] if {
	some list in ["read_only", "read_write"]
	some i, p in object.get(object.get(input, "filesystem_policy", {}), list, [])
}

fs_path(list, i) := sprintf("filesystem_policy.%s[%d]", [list, i])

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
	some ["read_write", i, p, c] in fs_paths
	c in system_dirs
	f := lib.finding(rego.metadata.rule(), fs_path("read_write", i), sprintf("%s is writable", [p]))
}

# credential_re matches canonical paths that name a credential store: SSH,
# GnuPG and cloud CLI credential directories (~/.aws, ~/.config/gcloud,
# ~/.azure, ~/.kube, ~/.oci), registry and forge tokens (~/.docker holding
# config.json, ~/.npmrc, ~/.pypirc, ~/.config/gh/hosts.yml, ~/.netrc,
# ~/.git-credentials, ~/.vault-token, Cargo and Terraform credentials),
# container and Kubernetes secret mounts (/run/secrets,
# /var/run/secrets/kubernetes.io/serviceaccount), .env files and private
# keys.
credential_re := concat("|", [
	`(^|/)(\.ssh|\.aws|\.kube|\.gnupg|\.docker|\.azure|\.oci|\.config/gcloud|\.config/gh|\.terraform\.d|\.cargo/credentials(\.toml)?)(/|$)`,
	`(^|/)(\.netrc|\.git-credentials|\.npmrc|\.pypirc|\.vault-token)$`,
	`^/(var/)?run/secrets(/|$)`,
	`(^|/)\.env(\.[^/]*)?$`,
	`\.(pem|key|p12|pfx)$`,
])

credential_store(p) if regex.match(credential_re, p)

# METADATA
# title: Access to a credential store
# description: >-
#   ~/.ssh, cloud CLI credentials (~/.aws, ~/.config/gcloud, ~/.azure,
#   ~/.kube), registry and forge tokens (~/.docker, ~/.npmrc,
#   ~/.config/gh), secret mounts (/run/secrets, the Kubernetes service
#   account), .env files and private keys hold credentials the agent must
#   never read, in any spelling of the path; credentials reach the sandbox
#   only through providers.
# custom:
#   id: FS021
#   severity: deny
deny_credential_store contains f if {
	some [list, i, p, c] in fs_paths
	credential_store(c)
	f := lib.finding(rego.metadata.rule(), fs_path(list, i), sprintf("%s exposes a credential store", [p]))
}

# plain_path holds for the common case, an absolute path without "." runs
# that fits the limit: nothing more to check.
plain_path(p) if {
	startswith(p, "/")
	not contains(p, "..")
	count(p) <= 4096
}

bad_path(p) := "is not absolute" if not startswith(p, "/")

bad_path(p) := "has a .. component" if {
	startswith(p, "/")
	regex.match(`(^|/)\.\.(/|$)`, p)
}

bad_path(p) := "is longer than 4096 bytes" if {
	startswith(p, "/")
	not regex.match(`(^|/)\.\.(/|$)`, p)
	count(p) > 4096
}

bad_refs contains [fs_path(list, i), sprintf("path %q %s", [p, reason])] if {
	some [list, i, p, _] in fs_paths
	not plain_path(p)
	reason := bad_path(p)
}

bad_refs contains [lib.bin_path(key, i), sprintf("path %q %s", [p, reason])] if {
	some [key, i, p] in lib.binaries
	not plain_path(p)
	not any_dir_glob(p)
	reason := bad_path(p)
}

# any_dir_glob holds for a binary glob that starts with "**/", such as
# "**/gh" (fullsend-ai/agents' provider profiles): OpenShell matches binaries
# with glob.match(b.path, ["/"], path) (crates/openshell-supervisor-network/
# data/sandbox-policy.rego:171 @ v0.0.111), where "**" also matches "/", so
# the glob matches absolute paths in every directory. FS028 still warns
# about the glob itself.
any_dir_glob(p) if {
	startswith(p, "**/")
	not regex.match(`(^|/)\.\.(/|$)`, p)
	count(p) <= 4096
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
