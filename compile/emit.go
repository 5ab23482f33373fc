package compile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/internal/parallel"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// emit renders every compiled agent's policy, the provenance sidecar and the
// manifest into o.Files, deterministically. The policies were marshalled by
// the compile workers; the sidecar and the manifest are encoded at once.
func (o *Output) emit(files map[string]string) error {
	m := &bundle.Manifest{Schema: bundle.ManifestSchema, OpenShellVersion: o.OpenShellVersion, Agents: map[string]bundle.ManifestAgent{}, Catalog: o.catalogRecord}
	prov := &bundle.ProvenanceFile{Schema: bundle.ProvenanceSchema, Agents: map[string]map[string][]bundle.Source{}}
	for _, name := range o.AgentNames() {
		c := o.Agents[name]
		file := name + ".yaml"
		data, err := policyDoc(c, o.OpenShellVersion)
		if err != nil {
			return fmt.Errorf("agent %s: %w", name, err)
		}
		o.Files[file] = data
		entry, err := manifestAgent(c, file, data, files)
		if err != nil {
			return fmt.Errorf("agent %s: %w", name, err)
		}
		m.Agents[name] = entry
		// The provider layers' elements name their profile's lines.
		prov.Agents[name] = c.Effective().Provenance()
		pinProfiles(m, c.Providers, o.Files)
	}
	// The provenance sidecar lets `policy lint` and `policy explain` point at
	// the author's lines without recompiling.
	var (
		provData, manifest []byte
		provErr, err       error
		wg                 sync.WaitGroup
	)
	wg.Go(func() { provData, provErr = prov.Encode() })
	manifest, err = m.Encode()
	wg.Wait()
	if provErr != nil {
		return provErr
	}
	o.Files[bundle.ProvenanceFileName] = provData
	if err != nil {
		return err
	}
	o.Files[bundle.ManifestFile] = manifest
	o.Manifest = m
	return o.checkWritten(prov)
}

// policyDoc is the policy file of c: the document the compile worker
// marshalled (marshalled now when the profiles emit mode changed the
// policy), within OpenShell's size limit.
func policyDoc(c *Compiled, version string) ([]byte, error) {
	data, err := c.doc, c.docErr
	if data == nil && err == nil {
		data, err = openshell.Marshal(c.Policy, header(c, version))
	}
	if err != nil {
		return nil, err
	}
	if len(data) > openshell.MaxPolicyBytes {
		return nil, fmt.Errorf("policy is %d bytes, over OpenShell's limit of %d", len(data), openshell.MaxPolicyBytes)
	}
	return data, nil
}

// manifestAgent is the manifest's entry for c, whose policy is data in
// file: every source pinned by the digest the loader read it with (files),
// and the runtime flags of its tier.
func manifestAgent(c *Compiled, file string, data []byte, files map[string]string) (bundle.ManifestAgent, error) {
	entry := bundle.ManifestAgent{
		Policy: file, PolicySHA256: bundle.SHA256Hex(data), Source: c.Agent.File,
		Runtime: c.Runtime, Model: c.Agent.Model, Tier: string(c.Tier), Provider: c.Provider,
		Skills: c.Skills, Spawns: c.Spawns, SpawnWidening: Widenings(c.Agent), Placeholders: c.Placeholders, Outputs: c.Outputs,
		Providers: manifestProviders(c.Providers),
	}
	for _, f := range c.Sources {
		sum, ok := files[f]
		if !ok {
			return entry, fmt.Errorf("source %s was not read by the loader", f)
		}
		entry.Sources = append(entry.Sources, bundle.SourceFile{Path: f, SHA256: sum})
	}
	entry.RuntimeFlags, entry.RuntimeEnv = runtimeFlags(c)
	return entry, nil
}

// ErrWrittenDiffers reports an emitted file that does not decode to what the
// compile checked. It is never the author's doing: the compiler refuses to
// write such a bundle (see checkWritten).
var ErrWrittenDiffers = errors.New("does not decode to what was checked")

// checkWritten decodes every file emit produced, as its readers (policy
// test, policy lint, image build, run, OpenShell) will, and refuses the
// output unless each holds exactly what the compile checked: every policy
// decodes strictly to the policy that was linted, tested and validated
// (openshell.Difference is empty), and manifest.json and provenance.json
// decode to the manifest and provenance that were encoded (the manifest
// compared as JSON, the provenance by ProvenanceFile.Equal: it is the
// largest file of the bundle, and comparing its sources directly costs a
// fraction of encoding it twice). A signed bundle
// is then exactly what was checked, whatever a header comment or an
// encoder does; Diff applies the same check to committed files.
func (o *Output) checkWritten(prov *bundle.ProvenanceFile) error {
	names := o.AgentNames()
	errs := make([]error, len(names))
	parallel.ForEach(len(names), 0, func(i int) {
		errs[i] = checkPolicyFile(names[i]+".yaml", o.Files[names[i]+".yaml"], o.Agents[names[i]].Policy)
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	m, err := bundle.DecodeManifest(o.Files[bundle.ManifestFile])
	if err == nil && !sameJSON(m, o.Manifest) {
		err = ErrWrittenDiffers
	}
	if err != nil {
		return fmt.Errorf("%s: %w", bundle.ManifestFile, err)
	}
	pf, err := bundle.DecodeProvenance(o.Files[bundle.ProvenanceFileName])
	if err == nil && !pf.Equal(prov) {
		err = ErrWrittenDiffers
	}
	if err != nil {
		return fmt.Errorf("%s: %w", bundle.ProvenanceFileName, err)
	}
	return nil
}

// checkPolicyFile decodes one policy file strictly and compares it with the
// policy it was written from.
func checkPolicyFile(file string, data []byte, want *openshell.Policy) error {
	got, err := openshell.Unmarshal(data)
	if err != nil {
		return fmt.Errorf("%s %w: %w", file, ErrWrittenDiffers, err)
	}
	if d := openshell.Difference(want, got); d != "" {
		return fmt.Errorf("%s %w: the decoded policy differs at %s", file, ErrWrittenDiffers, d)
	}
	return nil
}

// sameJSON reports whether a and b encode to the same JSON: the manifest
// type encodes deterministically (sorted keys), so equal bytes are equal
// documents.
func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// header is the comment block every emitted policy starts with; it begins
// with generatedMarker so Write knows the file is the compiler's.
func header(c *Compiled, version string) string {
	return fmt.Sprintf("Generated by fullsend policy compile from %s for OpenShell %s. DO NOT EDIT.", c.Agent.File, version)
}
