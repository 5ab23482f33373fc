// Package gitrepo is the one place fullsend reads git: a revision resolved
// to its commit, a project directory read from a commit without a checkout
// (`git ls-tree`, `git cat-file --batch`, no attribute applied), the root
// of the repository holding a directory, and HEAD's commit, commit time and
// `git describe`. Everything runs the git binary on the local repository;
// nothing fetches, checks out or writes.
//
// policydiff reads both sides of a diff through it, image the revision and
// timestamp of a build, publish the default version. It imports ciout only
// (the escaping of untrusted names in its errors).
package gitrepo
