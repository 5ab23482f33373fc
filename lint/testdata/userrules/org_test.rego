package main_test

import rego.v1

import data.main

test_team_prefix if {
	count(main.warn_team_prefix) == 1 with input as {"network_policies": {"x": {"name": "x"}}}
	count(main.warn_team_prefix) == 0 with input as {"network_policies": {"x": {"name": "team-x"}}}
}
