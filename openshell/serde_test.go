package openshell

import (
	"math"
	"testing"
)

// TestSerdeScalars pins the serde_yml scalar rules (serde_yaml 0.9 de.rs).
func TestSerdeScalars(t *testing.T) {
	uints := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"443", 443, true}, {"+443", 443, true}, {"0x1BB", 443, true}, {"0o673", 443, true},
		{"0b110111011", 443, true}, {"0", 0, true}, {"0443", 0, false}, {"+0443", 0, false}, {"1_000", 0, false},
		{"-1", 0, false}, {"0x", 0, false}, {"0x-1", 0, false}, {"0x+1", 0, false}, {"4.5", 0, false}, {"", 0, false},
		{"++1", 0, false}, {"+-1", 0, false}, {"18446744073709551615", math.MaxUint64, true}, {"18446744073709551616", 0, false},
	}
	for _, tc := range uints {
		if got, ok := SerdeUint(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("SerdeUint(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	ints := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"5", 5, true}, {"+5", 5, true}, {"-5", -5, true}, {"0x1f", 31, true}, {"-0x10", -16, true},
		{"+0o17", 15, true}, {"-0b11", -3, true},
		{"-9223372036854775808", math.MinInt64, true}, {"9223372036854775807", math.MaxInt64, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"-+5", 0, false}, {"+-5", 0, false}, {"-+0x10", 0, false}, {"--5", 0, false},
		{"05", 0, false}, {"-05", 0, false}, {"1_000", 0, false}, {"", 0, false}, {"-", 0, false},
	}
	for _, tc := range ints {
		if got, ok := SerdeInt(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("SerdeInt(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	types := map[string]string{
		"": "null", "~": "null", "null": "null", "NULL": "null", "nil": "string",
		"true": "boolean", "False": "boolean", "yes": "string", "on": "string",
		"1": "integer", "-1": "integer", "+1": "integer", "0x1F": "integer", "-0x1F": "integer",
		"0443": "string", "-0443": "string", "1_000": "string", "-+5": "string", "+-5": "string",
		"1.5": "float", "-1.5": "float", "+1.5": "float", "1e3": "float", "1.": "float", ".5": "float",
		".inf": "float", "+.inf": "float", "-.inf": "float", ".nan": "float", ".NaN": "float",
		"+.nan": "string", "-.nan": "string", "+-1.5": "string", "1e400": "string", "0x1p-2": "string",
		"inf": "string", "nan": "string", "infinity": "string", "open": "string", "bug*": "string", "v1.2": "string", "0x1G": "string",
	}
	for in, want := range types {
		if got := SerdePlainType(in); got != want {
			t.Errorf("SerdePlainType(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]bool{"true": true, "TRUE": true, "False": false} {
		if got, ok := SerdeBool(in); !ok || got != want {
			t.Errorf("SerdeBool(%q) = %v, %v", in, got, ok)
		}
	}
	if _, ok := SerdeBool("yes"); ok {
		t.Error(`SerdeBool("yes") is a boolean; serde_yml reads it as a string`)
	}
}

// FuzzSerdePlainType: the type is one of five, and agrees with the parsers.
func FuzzSerdePlainType(f *testing.F) {
	for _, s := range []string{"", "1", "-+5", "0x1F", ".inf", "1.5e3", "0443", "true", "+.nan"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		typ := SerdePlainType(s)
		_, isInt := SerdeInt(s)
		switch typ {
		case "null", "boolean", "float", "string":
			if isInt {
				t.Fatalf("%q: SerdeInt parses it, SerdePlainType says %s", s, typ)
			}
		case "integer":
		default:
			t.Fatalf("%q: type %q", s, typ)
		}
	})
}
