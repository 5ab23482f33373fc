package image

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func buildInfo(path, version string, settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{Path: path, Main: debug.Module{Path: ModulePath, Version: version}}
	for i := 0; i+1 < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

func TestExecutableFrom(t *testing.T) {
	yes := func(string) bool { return true }
	no := func(string) bool { return false }
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64"}
	tests := []struct {
		name                   string
		bi                     *debug.BuildInfo
		goarch                 string
		isStatic               func(string) bool
		wantNil                bool
		serves, released       []bool // amd64, arm64
		wantWhyArm64, wantVari string
	}{
		{name: "test binary", bi: buildInfo(ModulePath+"/image.test", "(devel)"), goarch: "amd64", isStatic: yes, wantNil: true},
		{name: "no build info", goarch: "amd64", isStatic: yes, wantNil: true},
		{name: "released", bi: buildInfo(CommandPath, "v1.2.3"), goarch: "amd64", isStatic: yes,
			serves: []bool{true, false}, released: []bool{true}},
		{name: "devel", bi: buildInfo(CommandPath, "(devel)"), goarch: "amd64", isStatic: yes,
			serves: []bool{true, false}, released: []bool{false}, wantWhyArm64: "development build (version (devel))"},
		{name: "dirty", bi: buildInfo(CommandPath, "v0.0.0-20260101000000-abcdefabcdef+dirty", "vcs.modified", "true"), goarch: "amd64", isStatic: yes,
			serves: []bool{true, false}, released: []bool{false}, wantWhyArm64: "modified tree"},
		{name: "dynamic", bi: buildInfo(CommandPath, "v1.2.3"), goarch: "arm64", isStatic: no,
			serves: []bool{false, false}, released: []bool{true}, wantWhyArm64: "dynamically linked"},
		{name: "arm variant", bi: buildInfo(CommandPath, "v1.2.3", "GOARM", "7"), goarch: "arm", isStatic: yes,
			serves: []bool{false, false}, released: []bool{true}, wantVari: "v7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := executableFrom(tt.bi, "/usr/local/bin/fullsend", "linux", tt.goarch, tt.isStatic)
			if tt.wantNil {
				if e != nil {
					t.Fatalf("got %+v, want nil", e)
				}
				if e.Serves(amd64) || e.Released() || !strings.Contains(e.why(amd64), "not an installed fullsend") {
					t.Errorf("nil executable serves, is released or explains %q", e.why(amd64))
				}
				return
			}
			if e == nil {
				t.Fatal("nil executable")
			}
			if got := []bool{e.Serves(amd64), e.Serves(arm64)}; got[0] != tt.serves[0] || got[1] != tt.serves[1] {
				t.Errorf("serves amd64, arm64 = %v, want %v", got, tt.serves)
			}
			if e.Released() != tt.released[0] {
				t.Errorf("released = %v, want %v", e.Released(), tt.released[0])
			}
			if tt.wantWhyArm64 != "" && !strings.Contains(e.why(arm64), tt.wantWhyArm64) {
				t.Errorf("why(arm64) = %q, want it to mention %q", e.why(arm64), tt.wantWhyArm64)
			}
			if e.Platform.Variant != tt.wantVari {
				t.Errorf("variant %q, want %q", e.Platform.Variant, tt.wantVari)
			}
		})
	}
}

func TestBinarySourceOrder(t *testing.T) {
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64"}
	released := &Executable{Path: "/bin/fullsend", Platform: amd64, Module: ModulePath, Version: "v1.2.3", Static: true}
	devel := &Executable{Path: "/bin/fullsend", Platform: amd64, Module: ModulePath, Version: "(devel)", Static: true}
	tests := []struct {
		name    string
		o       Options
		p       v1.Platform
		want    string
		wantErr string
	}{
		{"binary first", Options{Binaries: map[string]string{"linux/amd64": "/x"}, Self: released, Source: "/src"}, amd64, FromBinary, ""},
		{"self serves its platform", Options{Self: devel, Source: "/src"}, amd64, FromExecutable, ""},
		{"source for the others", Options{Self: released, Source: "/src"}, arm64, FromSource, ""},
		{"module at version", Options{Self: released}, arm64, FromModule, ""},
		{"devel without source", Options{Self: devel}, arm64, "", "development build"},
		{"nothing", Options{}, amd64, "", "not an installed fullsend"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			o.Platforms = []v1.Platform{tt.p}
			got, err := o.binarySource(tt.p)
			if tt.wantErr != "" {
				var be *BinaryError
				if !errors.As(err, &be) || !errors.Is(err, ErrNoSource) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want a BinaryError mentioning %q", err, tt.wantErr)
				}
				if CheckBinaries(o) == nil || !NeedsSource(o) {
					t.Errorf("CheckBinaries passes or NeedsSource is false for %s", tt.name)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("source %q, %v; want %q", got, err, tt.want)
			}
			if err := CheckBinaries(o); err != nil {
				t.Errorf("CheckBinaries: %v", err)
			}
		})
	}
}

func TestGoInstallWithoutToolchain(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	e := &Executable{Module: ModulePath, Version: "v1.2.3"}
	_, err := goInstall(t.Context(), e, v1.Platform{OS: "linux", Architecture: "arm64"}, t.TempDir())
	if !errors.Is(err, ErrNoToolchain) {
		t.Fatalf("error %v, want ErrNoToolchain", err)
	}
}

func TestIsStatic(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		data []byte
		want bool
	}{
		{"no program interpreter", elfWithProgram(elf.PT_LOAD), true},
		{"program interpreter", elfWithProgram(elf.PT_INTERP), false},
		{"Go source", []byte("package image\n"), false},
		{"truncated ELF", elfWithProgram(elf.PT_LOAD)[:40], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			if err := os.WriteFile(p, tt.data, 0o755); err != nil {
				t.Fatal(err)
			}
			if got := isStatic(p); got != tt.want {
				t.Errorf("isStatic = %v, want %v", got, tt.want)
			}
		})
	}
}

// elfWithProgram is a minimal ELF64 little-endian executable with one
// program header of type typ: PT_INTERP is what a dynamically linked
// binary carries.
func elfWithProgram(typ elf.ProgType) []byte {
	var b bytes.Buffer
	h := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_X86_64), Version: uint32(elf.EV_CURRENT),
		Phoff: 64, Ehsize: 64, Phentsize: 56, Phnum: 1}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	_ = binary.Write(&b, binary.LittleEndian, h)
	_ = binary.Write(&b, binary.LittleEndian, elf.Prog64{Type: uint32(typ), Off: 120, Filesz: 1, Memsz: 1})
	b.WriteByte(0)
	return b.Bytes()
}

// TestModuleBuildSaysWhy: a cgo-linked `go install` of fullsend used to
// re-install itself for minutes without a word; the build now logs one
// line first saying why (and how to avoid it), before go install starts.
func TestModuleBuildSaysWhy(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no go: the build fails right after the line
	cgo := &Executable{Path: "/home/u/go/bin/fullsend", Platform: amd64, Module: ModulePath, Version: "v1.2.3"}
	var log strings.Builder
	o := Options{Self: cgo, Log: &log, Platforms: []v1.Platform{amd64}}
	if _, err := o.binary(t.Context(), amd64, t.TempDir()); !errors.Is(err, ErrNoToolchain) {
		t.Fatalf("error %v, want ErrNoToolchain", err)
	}
	for _, want := range []string{"dynamically linked", "go install", "minutes", "CGO_ENABLED=0 go install " + CommandPath + "@v1.2.3"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log %q does not say %q", log.String(), want)
		}
	}
	if n := strings.Count(log.String(), "\n"); n != 1 {
		t.Errorf("%d lines, want one:\n%s", n, log.String())
	}
	other := moduleBuildNote(&Executable{Platform: amd64, Version: "v1.2.3", Static: true}, v1.Platform{OS: "linux", Architecture: "arm64"})
	if !strings.Contains(other, "--binary linux/arm64=PATH") {
		t.Errorf("other platform: %q, want the --binary hint", other)
	}
}
