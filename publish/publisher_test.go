package publish

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// fakePublisher records its calls and returns fixed results.
type fakePublisher struct {
	out   Published
	err   error
	calls *[]string
	name  string
}

func (f fakePublisher) Publish(context.Context, *Artifact) (Published, error) {
	*f.calls = append(*f.calls, f.name)
	return f.out, f.err
}

func TestMulti(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name      string
		ps        func(calls *[]string) []Publisher
		wantCalls []string
		want      Published
		wantErr   error
	}{
		{"none", func(*[]string) []Publisher { return nil }, nil, Published{}, nil},
		{"in order, merged", func(c *[]string) []Publisher {
			return []Publisher{
				fakePublisher{name: "layout", calls: c, out: Published{OCILayout: "out/image"}},
				fakePublisher{name: "tarball", calls: c, out: Published{Tarball: "out/image.tar"}},
				fakePublisher{name: "registry", calls: c, out: Published{Refs: []string{"r/a@sha256:1"}, Tags: []string{"r/a:v1"}}},
			}
		}, []string{"layout", "tarball", "registry"},
			Published{Refs: []string{"r/a@sha256:1"}, Tags: []string{"r/a:v1"}, OCILayout: "out/image", Tarball: "out/image.tar"}, nil},
		{"stops at the first error, keeps what was published", func(c *[]string) []Publisher {
			return []Publisher{
				fakePublisher{name: "layout", calls: c, out: Published{OCILayout: "out/image"}},
				fakePublisher{name: "registry", calls: c, out: Published{Refs: []string{"r/a@sha256:1"}}, err: boom},
				fakePublisher{name: "never", calls: c},
			}
		}, []string{"layout", "registry"}, Published{Refs: []string{"r/a@sha256:1"}, OCILayout: "out/image"}, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []string
			got, err := Multi(tt.ps(&calls)...).Publish(context.Background(), &Artifact{})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(calls, tt.wantCalls) || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("calls %v published %+v\nwant %v %+v", calls, got, tt.wantCalls, tt.want)
			}
		})
	}
}
