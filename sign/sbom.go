package sign

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha1" //nolint:gosec // SPDX 2.3 requires a SHA1 checksum on every file; SHA256 is recorded too.
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"golang.org/x/sync/errgroup"
)

// DefaultSBOMPaths returns the image paths an SBOM lists by default: what
// fullsend adds on top of the base image (the harness binary and
// /opt/fullsend). The base image carries its own SBOM.
func DefaultSBOMPaths() []string {
	return []string{"opt/fullsend/", "usr/local/bin/fullsend", "usr/bin/fullsend"}
}

// maxBuildInfoBinary bounds how much of one executable is read into memory
// to look for Go build info.
const maxBuildInfoBinary = 512 << 20

// SBOMOptions configures the SPDX SBOM attestation.
type SBOMOptions struct {
	// Paths are the path prefixes whose regular files are listed with
	// checksums: "dir/" for a tree, "dir/file" for one file, "/" for the
	// whole filesystem; nil means DefaultSBOMPaths.
	Paths []string
	// Created is the document creation time; zero means the image's config
	// creation time (SOURCE_DATE_EPOCH in reproducible builds), so the SBOM
	// is as reproducible as the image.
	Created time.Time
	// Tool names the creator ("fullsend-v1.2.3").
	Tool string
	// AllLayers lists files from every layer. By default, when the image
	// history marks layers as added by `fullsend image build`, only those
	// layers are read: the base image's files are its own SBOM's business,
	// and a signing step need not download a gigabyte base to describe
	// what fullsend added.
	AllLayers bool
}

// LayerHistoryPrefix starts the history entry (created_by) of every layer
// `fullsend image build` adds.
const LayerHistoryPrefix = "fullsend image build:"

type spdxDocument struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      spdxCreationInfo   `json:"creationInfo"`
	Packages          []spdxPackage      `json:"packages"`
	Files             []spdxFile         `json:"files,omitempty"`
	Relationships     []spdxRelationship `json:"relationships"`
}

type spdxCreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
	Comment  string   `json:"comment,omitempty"`
}

type spdxPackage struct {
	SPDXID                string            `json:"SPDXID"`
	Name                  string            `json:"name"`
	VersionInfo           string            `json:"versionInfo,omitempty"`
	DownloadLocation      string            `json:"downloadLocation"`
	FilesAnalyzed         bool              `json:"filesAnalyzed"`
	PrimaryPackagePurpose string            `json:"primaryPackagePurpose,omitempty"`
	Checksums             []spdxChecksum    `json:"checksums,omitempty"`
	ExternalRefs          []spdxExternalRef `json:"externalRefs,omitempty"`
	Comment               string            `json:"comment,omitempty"`
}

type spdxFile struct {
	SPDXID    string         `json:"SPDXID"`
	FileName  string         `json:"fileName"`
	Checksums []spdxChecksum `json:"checksums"`
	Comment   string         `json:"comment,omitempty"`
}

type spdxChecksum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"checksumValue"`
}

type spdxExternalRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

type spdxRelationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

// platformImage is one image of the subject with its platform label.
type platformImage struct {
	label string // "" for a single image, "linux/amd64" in an index
	img   v1.Image
}

// imageContent is what the SBOM records of one platform image.
type imageContent struct {
	// ownLayers is true when only fullsend's layers were read.
	ownLayers bool
	files     []spdxFile
	modules   map[string][]*buildinfo.BuildInfo // file SPDXID -> build info
}

func sbomStatement(ctx context.Context, subj Subject, ref name.Digest, o SBOMOptions) (*statement, error) {
	doc, err := buildSBOM(ctx, subj, ref, o)
	if err != nil {
		return nil, fmt.Errorf("building SBOM of %s: %w", ref, err)
	}
	return newStatement(ref, PredicateSPDX, doc), nil
}

func buildSBOM(ctx context.Context, subj Subject, ref name.Digest, o SBOMOptions) (*spdxDocument, error) {
	prefixes := sbomPrefixes(o.Paths)
	imgs, err := platformImages(subj)
	if err != nil {
		return nil, err
	}
	contents, err := scanImages(ctx, imgs, prefixes, o.AllLayers)
	if err != nil {
		return nil, err
	}
	created := o.Created
	if created.IsZero() && len(imgs) > 0 {
		if cf, err := imgs[0].img.ConfigFile(); err == nil {
			created = cf.Created.Time
		}
	}
	tool := o.Tool
	if tool == "" {
		tool = "fullsend"
	}
	doc := newSPDXDocument(ref, created, tool)
	doc.CreationInfo.Comment = scopeComment(prefixes, contents)
	modIDs := map[string]string{} // path@version -> SPDXID
	for _, c := range contents {
		doc.addContent(c, modIDs)
	}
	return doc, nil
}

// sbomPrefixes is the SBOM's path prefixes, relative to the image root:
// paths, else DefaultSBOMPaths.
func sbomPrefixes(paths []string) []string {
	if paths == nil {
		return DefaultSBOMPaths()
	}
	prefixes := make([]string, len(paths))
	for i, p := range paths {
		prefixes[i] = strings.TrimPrefix(p, "/") // "/opt/x/" and "opt/x/" alike; "" or "/" = everything
	}
	return prefixes
}

// scanImages scans every platform image in parallel; an error names its
// platform.
func scanImages(ctx context.Context, imgs []platformImage, prefixes []string, allLayers bool) ([]imageContent, error) {
	contents := make([]imageContent, len(imgs))
	g, gctx := errgroup.WithContext(ctx)
	for i, pi := range imgs {
		g.Go(func() error {
			c, err := scanImage(gctx, pi, prefixes, allLayers)
			if err != nil {
				if pi.label != "" {
					return fmt.Errorf("%s: %w", pi.label, err)
				}
				return err
			}
			contents[i] = c
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return contents, nil
}

// newSPDXDocument is the SBOM of ref before its files and modules: the
// document, the image package and the DESCRIBES relationship.
func newSPDXDocument(ref name.Digest, created time.Time, tool string) *spdxDocument {
	h, _ := hashOf(ref)
	return &spdxDocument{
		SPDXVersion:       "SPDX-2.3",
		DataLicense:       "CC0-1.0",
		SPDXID:            "SPDXRef-DOCUMENT",
		Name:              ref.String(),
		DocumentNamespace: "https://fullsend.dev/spdx/" + ref.Repository.Name() + "/" + h.Hex,
		CreationInfo: spdxCreationInfo{
			Created:  created.UTC().Format(time.RFC3339),
			Creators: []string{"Tool: " + tool},
		},
		Packages: []spdxPackage{{
			SPDXID:                "SPDXRef-Image",
			Name:                  ref.Repository.Name(),
			VersionInfo:           h.String(),
			DownloadLocation:      "NOASSERTION",
			FilesAnalyzed:         false,
			PrimaryPackagePurpose: "CONTAINER",
			Checksums:             []spdxChecksum{{Algorithm: "SHA256", Value: h.Hex}},
			ExternalRefs: []spdxExternalRef{{
				Category: "PACKAGE-MANAGER", Type: "purl",
				Locator: "pkg:oci/" + path.Base(ref.Repository.RepositoryStr()) + "@" + h.String() + "?repository_url=" + ref.Repository.Name(),
			}},
		}},
		Relationships: []spdxRelationship{{Element: "SPDXRef-DOCUMENT", Type: "DESCRIBES", Related: "SPDXRef-Image"}},
	}
}

// scopeComment says what the SBOM covers: the prefixes in fullsend's own
// layers when every image's were found, else in the whole filesystem.
func scopeComment(prefixes []string, contents []imageContent) string {
	own := len(contents) > 0
	for _, c := range contents {
		own = own && c.ownLayers
	}
	scope := "files under " + strings.Join(prefixes, ", ")
	if own {
		return scope + " in the layers added by fullsend image build; the base image is described by its own SBOM"
	}
	return scope + " in the image filesystem (all layers)"
}

// addContent adds one platform image's files (CONTAINS) and the Go
// modules linked into its executables (STATIC_LINK), each module package
// once across the document (modIDs: path@version -> SPDXID).
func (doc *spdxDocument) addContent(c imageContent, modIDs map[string]string) {
	for _, f := range c.files {
		doc.Files = append(doc.Files, f)
		doc.Relationships = append(doc.Relationships, spdxRelationship{Element: "SPDXRef-Image", Type: "CONTAINS", Related: f.SPDXID})
	}
	for _, fileID := range slices.Sorted(maps.Keys(c.modules)) {
		for _, bi := range c.modules[fileID] {
			mods := append([]*debugModule{{Path: bi.Main.Path, Version: bi.Main.Version, Sum: bi.Main.Sum}}, depsOf(bi)...)
			for _, m := range mods {
				if m.Path == "" {
					continue
				}
				id := doc.modulePackage(m, modIDs)
				doc.Relationships = append(doc.Relationships, spdxRelationship{Element: fileID, Type: "STATIC_LINK", Related: id})
			}
		}
	}
}

// modulePackage returns the SPDXID of module m's package, adding the
// package the first time the module is seen.
func (doc *spdxDocument) modulePackage(m *debugModule, modIDs map[string]string) string {
	key := m.Path + "@" + m.Version
	if id, ok := modIDs[key]; ok {
		return id
	}
	id := "SPDXRef-GoModule-" + spdxIDSafe(key)
	modIDs[key] = id
	pkg := spdxPackage{
		SPDXID: id, Name: m.Path, VersionInfo: m.Version,
		DownloadLocation: "NOASSERTION", FilesAnalyzed: false, PrimaryPackagePurpose: "LIBRARY",
		ExternalRefs: []spdxExternalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: "pkg:golang/" + m.Path + versionSuffix(m.Version)}},
	}
	if m.Sum != "" {
		pkg.Comment = "go.sum " + m.Sum
	}
	doc.Packages = append(doc.Packages, pkg)
	return id
}

type debugModule struct{ Path, Version, Sum string }

func depsOf(bi *buildinfo.BuildInfo) []*debugModule {
	var out []*debugModule
	for _, d := range bi.Deps {
		m := d
		if m.Replace != nil {
			m = m.Replace
		}
		out = append(out, &debugModule{Path: m.Path, Version: m.Version, Sum: m.Sum})
	}
	return out
}

func versionSuffix(v string) string {
	if v == "" || v == "(devel)" {
		return ""
	}
	return "@" + v
}

func platformImages(subj Subject) ([]platformImage, error) {
	if subj.Image != nil {
		return []platformImage{{img: subj.Image}}, nil
	}
	if subj.Index == nil {
		return nil, ErrNoSubject
	}
	im, err := subj.Index.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out []platformImage
	for _, d := range im.Manifests {
		if !d.MediaType.IsImage() {
			continue
		}
		if d.Platform != nil && d.Platform.OS == "unknown" {
			continue // attestation manifests of BuildKit
		}
		img, err := subj.Index.Image(d.Digest)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", d.Digest, err)
		}
		label := d.Digest.String()
		if d.Platform != nil {
			label = d.Platform.String()
		}
		out = append(out, platformImage{label: label, img: img})
	}
	return out, nil
}

// scanImage lists the regular files under prefixes in the flattened image
// filesystem, with SHA1 and SHA256, and reads Go build info from executables.
func scanImage(ctx context.Context, pi platformImage, prefixes []string, allLayers bool) (imageContent, error) {
	c := imageContent{modules: map[string][]*buildinfo.BuildInfo{}}
	src := pi.img
	if !allLayers {
		own, err := ownLayers(pi.img)
		if err != nil {
			return c, err
		}
		if own != nil {
			src, c.ownLayers = own, true
		}
	}
	rc := mutate.Extract(src)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		if err := ctx.Err(); err != nil {
			return c, err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return c, fmt.Errorf("reading image filesystem: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		p := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		if !hasAnyPrefix(p, prefixes) {
			continue
		}
		f, bi, err := scanFile(tr, hdr, p, pi.label)
		if err != nil {
			return c, err
		}
		c.files = append(c.files, f)
		if bi != nil {
			c.modules[f.SPDXID] = append(c.modules[f.SPDXID], bi)
		}
	}
	sort.Slice(c.files, func(i, j int) bool { return c.files[i].FileName < c.files[j].FileName })
	return c, nil
}

// scanFile reads the regular file at p (its header hdr, its content the
// tar's current entry) into its SPDX entry, hashed with SHA1 and SHA256,
// and the Go build info of an executable not over maxBuildInfoBinary (nil
// for others and when there is none).
func scanFile(r io.Reader, hdr *tar.Header, p, label string) (spdxFile, *buildinfo.BuildInfo, error) {
	s1, s256 := sha1.New(), sha256.New() //nolint:gosec
	var head bytes.Buffer
	w := io.MultiWriter(s1, s256)
	exec := hdr.Mode&0o111 != 0 && hdr.Size <= maxBuildInfoBinary
	if exec {
		w = io.MultiWriter(s1, s256, &head)
	}
	if _, err := io.Copy(w, r); err != nil {
		return spdxFile{}, nil, fmt.Errorf("reading /%s: %w", p, err)
	}
	f := spdxFile{SPDXID: "SPDXRef-File-" + spdxIDSafe(label+"/"+p), FileName: "./" + p, Checksums: []spdxChecksum{
		{Algorithm: "SHA1", Value: hex.EncodeToString(s1.Sum(nil))},
		{Algorithm: "SHA256", Value: hex.EncodeToString(s256.Sum(nil))},
	}}
	if label != "" {
		f.Comment = "platform " + label
	}
	if exec {
		if bi, err := buildinfo.Read(bytes.NewReader(head.Bytes())); err == nil {
			return f, bi, nil
		}
	}
	return f, nil, nil
}

// ownLayers returns an image of only the layers whose history says
// `fullsend image build` added them, or nil when there are none or the
// history does not map onto the layers.
func ownLayers(img v1.Image) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading image config: %w", err)
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("reading image layers: %w", err)
	}
	var hist []v1.History
	for _, h := range cf.History {
		if !h.EmptyLayer {
			hist = append(hist, h)
		}
	}
	if len(hist) != len(layers) {
		return nil, nil
	}
	var own []v1.Layer
	for i, h := range hist {
		if strings.HasPrefix(h.CreatedBy, LayerHistoryPrefix) {
			own = append(own, layers[i])
		}
	}
	if len(own) == 0 {
		return nil, nil
	}
	return mutate.AppendLayers(empty.Image, own...)
}

func hasAnyPrefix(p string, prefixes []string) bool {
	for _, pre := range prefixes {
		if pre == "" {
			return true
		}
		if strings.HasSuffix(pre, "/") {
			if strings.HasPrefix(p, pre) {
				return true
			}
		} else if p == pre {
			return true
		}
	}
	return false
}

// spdxIDSafe maps s to the SPDX ID alphabet [A-Za-z0-9.-], keeping it
// unique by appending a short hash when characters had to be replaced.
func spdxIDSafe(s string) string {
	var b strings.Builder
	changed := false
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
			changed = true
		}
	}
	if changed {
		b.WriteString("-" + sha256Hex([]byte(s))[:8])
	}
	return b.String()
}
