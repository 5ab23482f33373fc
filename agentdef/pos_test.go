package agentdef

import "testing"

func TestPosCompare(t *testing.T) {
	tests := []struct {
		a, b Pos
		want int
	}{
		{Pos{File: "a.md", Line: 9}, Pos{File: "a.md", Line: 10}, -1}, // numerically, not as text
		{Pos{File: "a.md", Line: 2, Column: 10}, Pos{File: "a.md", Line: 2, Column: 9}, 1},
		{Pos{File: "a.md", Line: 30}, Pos{File: "b.md", Line: 1}, -1},
		{Pos{File: "a.md"}, Pos{File: "a.md", Line: 1}, -1},
		{Pos{File: "a.md", Line: 3, Column: 4}, Pos{File: "a.md", Line: 3, Column: 4}, 0},
	}
	for _, tt := range tests {
		if got := tt.a.Compare(tt.b); got != tt.want {
			t.Errorf("%s.Compare(%s) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := tt.b.Compare(tt.a); got != -tt.want {
			t.Errorf("%s.Compare(%s) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
}
