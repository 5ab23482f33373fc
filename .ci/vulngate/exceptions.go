package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Exception accepts one called vulnerability in one module.
type Exception struct {
	ID, Module string
	// Why it is accepted, what was checked about its reachability, and the
	// condition under which the line must be removed.
	Why, Reachability, RemoveWhen string
	Line                          int
}

// Key is the (vulnerability, module) pair findings are matched on.
func (e Exception) Key() Key { return Key{ID: e.ID, Module: e.Module} }

// Key identifies a called vulnerability: an ID in one module ("stdlib" for
// the standard library), whatever the version.
type Key struct{ ID, Module string }

var idPattern = regexp.MustCompile(`^GO-[0-9]{4}-[0-9]{4,}$`)

// ParseExceptions reads the exceptions file: one exception per line,
// five fields separated by " | " (ID | module | why accepted |
// reachability checked | removed when); blank lines and lines starting
// with # are ignored. Every field is required and a pair is listed once.
func ParseExceptions(r io.Reader) ([]Exception, error) {
	var out []Exception
	seen := map[Key]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseException(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		e.Line = n
		if first, dup := seen[e.Key()]; dup {
			return nil, fmt.Errorf("line %d: %s in %s is already listed on line %d", n, e.ID, e.Module, first)
		}
		seen[e.Key()] = n
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func parseException(line string) (Exception, error) {
	fields := strings.Split(line, " | ")
	if len(fields) != 5 {
		return Exception{}, fmt.Errorf("want 5 fields separated by \" | \" (ID | module | why | reachability | removed when), got %d", len(fields))
	}
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
		if fields[i] == "" {
			return Exception{}, errors.New("every field must be filled in (ID | module | why | reachability | removed when)")
		}
	}
	if !idPattern.MatchString(fields[0]) {
		return Exception{}, fmt.Errorf("%q is not a Go vulnerability ID (GO-YYYY-NNNN)", fields[0])
	}
	return Exception{ID: fields[0], Module: fields[1], Why: fields[2], Reachability: fields[3], RemoveWhen: fields[4]}, nil
}
