package fullsend.lib_test

import rego.v1

import data.fullsend.lib
import data.fullsend.test as t

vertex := t.without(
	t.ep({"host": "*.googleapis.com", "rules": [
		{"allow": {"method": "POST", "path": "/v1/projects/*/locations/*/publishers/anthropic/models/**"}},
		{"allow": {"method": "POST", "path": "/token"}},
	]}),
	{"access"},
)

test_inference_is_not_a_write if {
	not lib.writes(vertex)
	not lib.writes(t.ep({}))
}

test_writes if {
	lib.writes(t.ep({"access": "read-write"}))
	lib.writes(t.without(t.ep({}), {"protocol"}))
	lib.writes(t.without(t.ep({"rules": [{"allow": {"method": "POST", "path": "/v1/**"}}]}), {"access"}))
	lib.writes(t.without(t.ep({"host": "*.googleapis.com", "rules": [{"allow": {"method": "POST", "path": "/v1/projects/**"}}]}), {"access"}))
	lib.writes(t.without(t.ep({"host": "storage.example.com", "rules": [{"allow": {"method": "POST", "path": "/token"}}]}), {"access"}))
}

test_canonical_path if {
	every p, want in {
		"/etc": "/etc", "//etc": "/etc", "/etc//": "/etc", "///root": "/root", "/usr/./bin/": "/usr/bin",
		"/etc/.": "/etc", "/": "/", "//": "/", "/.": "/", "/home/u/.ssh": "/home/u/.ssh", "/a//.env": "/a/.env",
		"/a/../b": "/a/../b", "rel//x": "rel/x",
	} {
		lib.canonical_path(p) == want
	}
}
