package denial

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// jsonEdgeLines are JSON lines encoding/json reads in ways a naive reader
// would not: keys it folds, keys twice, nulls, numbers it refuses,
// escapes, bad UTF-8, syntax errors, deep nesting, long lines. Each reads
// alike through ParseJSONLine and through encoding/json alone.
func jsonEdgeLines() map[string]string {
	const ev = `"class_uid":4001,"action_id":2,"time":7`
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	chain := func(n int) string {
		return `{` + ev + `,"actor":{"process":{"name":"/b","pid":1` +
			strings.Repeat(`,"parent_process":{"name":"/p","pid":2`, n) + strings.Repeat("}", n) + `}}}`
	}
	return map[string]string{
		"plain":                    `{` + ev + `,"dst_endpoint":{"domain":"A.example","port":443}}`,
		"class twice":              `{"class_uid":4001,"class_uid":4002,"action_id":2}`,
		"class twice, last other":  `{"class_uid":4001,"class_uid":5001,"action_id":2}`,
		"object twice merges":      `{` + ev + `,"dst_endpoint":{"domain":"a","port":1},"dst_endpoint":{"ip":"b"}}`,
		"object then null":         `{` + ev + `,"dst_endpoint":{"domain":"a","port":1},"dst_endpoint":null}`,
		"name twice in a process":  `{` + ev + `,"actor":{"process":{"name":"/a","name":"/b"}}}`,
		"unknown key twice":        `{` + ev + `,"x":1,"x":"y"}`,
		"upper-case key":           `{"CLASS_UID":4001,"action_id":2}`,
		"mixed-case key":           `{"Class_Uid":4001,"Action_ID":2,"Dst_Endpoint":{"Domain":"h"}}`,
		"long s folds to s":        `{"cla\u017f\u017f_uid":4001,"action_id":2}`,
		"kelvin sign key":          `{` + ev + `,"\u212a":1}`,
		"escaped key":              `{"class\u005fuid":4001,"action_id":2}`,
		"escaped unknown key":      `{` + ev + `,"\u0078":1}`,
		"null class":               `{"class_uid":null,"action_id":2}`,
		"null everything":          `{` + ev + `,"message":null,"status_detail":null,"dst_endpoint":null,"actor":null,"firewall_rule":null,"http_request":null}`,
		"null nested":              `{` + ev + `,"actor":{"process":null},"http_request":{"http_method":null,"url":null}}`,
		"null parent":              `{` + ev + `,"actor":{"process":{"name":"/b","parent_process":null}}}`,
		"empty parent":             `{` + ev + `,"actor":{"process":{"name":"/b","parent_process":{}}}}`,
		"parent before name":       `{` + ev + `,"actor":{"process":{"parent_process":{"parent_process":{"name":"/g"},"name":"/p"},"name":"/b"}}}`,
		"empty status_detail":      `{` + ev + `,"message":"m","status_detail":""}`,
		"class too big":            `{"class_uid":40010000000000000000000,"action_id":2}`,
		"class as float":           `{"class_uid":4001.0,"action_id":2}`,
		"class with exponent":      `{"class_uid":4.001e3,"action_id":2}`,
		"class as string":          `{"class_uid":"4001","action_id":2}`,
		"class as bool":            `{"class_uid":true,"action_id":2}`,
		"negative zero time":       `{"class_uid":4001,"action_id":2,"time":-0}`,
		"time too big":             `{"class_uid":4001,"action_id":2,"time":9223372036854775808}`,
		"time min":                 `{"class_uid":4001,"action_id":2,"time":-9223372036854775808}`,
		"pid max":                  `{` + ev + `,"actor":{"process":{"pid":9223372036854775807}}}`,
		"parent pid too big":       `{` + ev + `,"actor":{"process":{"parent_process":{"pid":9223372036854775808}}}}`,
		"port as string":           `{` + ev + `,"dst_endpoint":{"port":"443"}}`,
		"url port float":           `{` + ev + `,"http_request":{"url":{"port":1.5}}}`,
		"huge unknown number":      `{` + ev + `,"x":1e400,"y":-123456789012345678901234567890.5E-7}`,
		"actor a string":           `{` + ev + `,"actor":"x"}`,
		"actor an array":           `{` + ev + `,"actor":[]}`,
		"message a number":         `{` + ev + `,"message":1}`,
		"message an object":        `{` + ev + `,"message":{}}`,
		"action unknown":           `{"class_uid":4002,"action_id":3}`,
		"other class":              `{"class_uid":6003,"action_id":1,"actor":{"process":{"name":"x"}}}`,
		"escapes in strings":       `{` + ev + `,"message":"a\nb\r\"q\" \u00e9 \ud83d\ude00 \/ \\","dst_endpoint":{"domain":"\u0041.b"}}`,
		"lone surrogate":           `{` + ev + `,"message":"x\ud800y"}`,
		"invalid utf-8":            "{" + ev + `,"message":"a` + "\xff\xfe" + `b","dst_endpoint":{"domain":"h` + "\xc3" + `"}}`,
		"invalid utf-8 unknown":    "{" + ev + `,"z":"` + "\xff" + `"}`,
		"non-ASCII value":          `{` + ev + `,"dst_endpoint":{"domain":"Äpi.example"}}`,
		"control byte in a string": "{" + ev + `,"message":"a` + "\x01" + `"}`,
		"bad escape":               `{` + ev + `,"message":"\x"}`,
		"short unicode escape":     `{` + ev + `,"message":"\u12"}`,
		"trailing comma":           `{` + ev + `,}`,
		"trailing garbage":         `{` + ev + `} x`,
		"two objects":              `{` + ev + `}{}`,
		"unterminated":             `{` + ev,
		"unterminated string":      `{` + ev + `,"message":"abc`,
		"leading zero":             `{` + ev + `,"x":01}`,
		"plus sign":                `{` + ev + `,"x":+1}`,
		"bare dot":                 `{` + ev + `,"x":.5}`,
		"minus alone":              `{` + ev + `,"x":-}`,
		"dot without digits":       `{` + ev + `,"x":1.}`,
		"exponent without digits":  `{` + ev + `,"x":1e}`,
		"bad literal":              `{` + ev + `,"x":tru}`,
		"literals":                 `{` + ev + `,"x":[true,false,null,{},[],"",0,-0.0e+0]}`,
		"whitespace everywhere":    " \t{ \"class_uid\" :\t4001 ,\n\"action_id\" : 2 , \"dst_endpoint\" : { \"domain\" : \"h\" } }\r ",
		"missing colon":            `{"class_uid" 4001}`,
		"array top":                `[{"class_uid":4001,"action_id":2}]`,
		"null top":                 `null`,
		"number top":               `4001`,
		"empty object":             `{}`,
		"empty":                    ``,
		"nesting 100":              `{` + ev + `,"x":` + deep(100) + `}`,
		"nesting 200":              `{` + ev + `,"x":` + deep(200) + `}`,
		"nesting 9999":             `{` + ev + `,"x":` + deep(9999) + `}`,
		"nesting 10000":            `{` + ev + `,"x":` + deep(10000) + `}`,
		"unbalanced nesting":       `{` + ev + `,"x":` + deep(50)[:99] + `}`,
		"ancestors 63":             chain(63),
		"ancestors 64":             chain(64),
		"ancestors 65":             chain(65),
		"ancestors 300":            chain(300),
		"1 MiB message":            `{` + ev + `,"message":"` + strings.Repeat("é", 1<<19) + `"}`,
		"1 MiB of unknown keys":    `{` + ev + strings.Repeat(`,"k":[1,"a",{"b":null}]`, 1<<15) + `}`,
		"query in path":            `{` + ev + `,"http_request":{"http_method":"GET","url":{"hostname":"H","path":"/a?b#c","port":0}}}`,
		"empty path":               `{"class_uid":4002,"action_id":1,"http_request":{"url":{"path":""}}}`,
		"url without http_method":  `{"class_uid":4002,"action_id":1,"http_request":{"url":{"hostname":"h","port":8080}}}`,
		"ip without domain":        `{` + ev + `,"dst_endpoint":{"ip":"2001:DB8::1","port":22}}`,
	}
}

// jsonLines are the JSON lines of the corpus, the fixtures and the edge
// cases.
func jsonLines(t *testing.T) map[string]string {
	lines := jsonEdgeLines()
	for i, tc := range corpus() {
		tc.ev.TimeMS = t0 + int64(i)
		lines["corpus "+tc.name] = tc.ev.jsonLine()
	}
	files, _ := filepath.Glob(seedLogs + "*")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range bytes.Split(b, []byte("\n")) {
			if bytes.HasPrefix(l, []byte("{")) {
				lines[filepath.Base(name)+":"+itoa(i+1)] = string(l)
			}
		}
	}
	return lines
}

// TestParseJSONLineAsDecoder: every line reads as encoding/json alone
// reads it (decodeOCSF, the former decoder), field for field.
func TestParseJSONLineAsDecoder(t *testing.T) {
	for name, line := range jsonLines(t) {
		got, gres := ParseJSONLine(line)
		want, wres := decodedJSONLine(line)
		if gres != wres || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q\n got %d %+v\nwant %d %+v", name, cut(line), gres, got, wres, want)
		}
	}
}

// TestScanOCSFReadsOpenShellLines: the single pass reads every line
// OpenShell writes (the corpus, the fixtures' JSONL) without falling back
// to encoding/json, and leaves every line that encoding/json could read
// otherwise to it.
func TestScanOCSFReadsOpenShellLines(t *testing.T) {
	for name, line := range jsonLines(t) {
		_, ok := scanOCSF(line)
		if strings.HasPrefix(name, "corpus ") && !ok {
			t.Errorf("%s: not read in one pass: %q", name, cut(line))
		}
	}
	for _, name := range []string{"class twice", "object twice merges", "object then null", "upper-case key", "long s folds to s",
		"kelvin sign key", "escaped key", "class too big", "class as float", "port as string", "actor an array", "nesting 200",
		"ancestors 300", "trailing garbage", "bad escape", "leading zero", "array top", "null top"} {
		if _, ok := scanOCSF(jsonEdgeLines()[name]); ok {
			t.Errorf("%s: read in one pass, not left to encoding/json", name)
		}
	}
}

// decodedJSONLine is ParseJSONLine with encoding/json alone.
func decodedJSONLine(s string) (Event, LineResult) {
	f, err := decodeOCSF(s)
	if err != nil {
		return Event{}, LineUnparsed
	}
	return f.event()
}

// cut shortens a line for a message.
func cut(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
