package agentdef

import (
	"net/url"
	"testing"
)

func TestURLPort(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"https://mcp.example.com/mcp", 443},
		{"http://mcp.example.com/mcp", 80},
		{"https://mcp.example.com:8443/mcp", 8443},
		{"https://mcp.example.com:99999/mcp", 0},
	} {
		u, err := url.Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := urlPort(u); got != tc.want {
			t.Errorf("urlPort(%s) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
