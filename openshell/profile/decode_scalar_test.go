package profile

import (
	"math"
	"testing"
)

// TestSerdeInt: the plain scalars serde_yml reads as an i64 (serde_yaml's
// parse_unsigned_int, then parse_negative_int).
func TestSerdeInt(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"5", 5, true},
		{"+5", 5, true},
		{"-5", -5, true},
		{"0x1f", 31, true},
		{"-0x10", -16, true},
		{"+0o17", 15, true},
		{"-0b11", -3, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"9223372036854775808", 0, false},
		{"-+5", 0, false}, // one sign only
		{"+-5", 0, false},
		{"-+0x10", 0, false},
		{"--5", 0, false},
		{"05", 0, false}, // a leading zero: a string to serde_yml
		{"-05", 0, false},
		{"1_000", 0, false},
		{"", 0, false},
		{"-", 0, false},
	}
	for _, tt := range tests {
		got, ok := serdeInt(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("serdeInt(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
