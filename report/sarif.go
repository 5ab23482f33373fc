package report

import (
	"io"
	"net/url"
	"path/filepath"
	"strings"
)

// SARIF 2.1.0 types, only the parts fullsend emits.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool    sarifTool     `json:"tool"`
		Results []sarifResult `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		Version        string      `json:"version,omitempty"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string         `json:"id"`
		Name                 string         `json:"name"`
		ShortDescription     sarifText      `json:"shortDescription"`
		FullDescription      sarifText      `json:"fullDescription"`
		DefaultConfiguration sarifConfig    `json:"defaultConfiguration"`
		Properties           map[string]any `json:"properties,omitempty"`
	}
	sarifConfig struct {
		Level string `json:"level"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID              string             `json:"ruleId"`
		RuleIndex           int                `json:"ruleIndex"`
		Level               string             `json:"level"`
		Message             sarifText          `json:"message"`
		Locations           []sarifLocation    `json:"locations"`
		PartialFingerprints map[string]string  `json:"partialFingerprints"`
		Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
		Properties          map[string]any     `json:"properties,omitempty"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical     `json:"physicalLocation"`
		LogicalLocations []sarifLogicalLoc `json:"logicalLocations,omitempty"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           *sarifRegion  `json:"region,omitempty"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn,omitempty"`
	}
	sarifLogicalLoc struct {
		FullyQualifiedName string `json:"fullyQualifiedName"`
		Kind               string `json:"kind"`
	}
	sarifSuppression struct {
		Kind          string `json:"kind"`
		Justification string `json:"justification"`
	}
)

func sarifLevel(sev string) string {
	if sev == SeverityDeny {
		return "error"
	}
	return "warning"
}

// sarifURI renders a file path as a relative URI reference (forward slashes,
// escaped), which code scanning resolves against the repository root.
func sarifURI(p string) string {
	p = filepath.ToSlash(p)
	p = strings.TrimPrefix(p, "./")
	return (&url.URL{Path: p}).EscapedPath()
}

// writeSARIF emits a SARIF 2.1.0 log for GitHub code scanning. Locations
// point at the agent or skill source line when provenance knows it, else at
// the policy file line; the policy path is a logical location.
func (r *Report) writeSARIF(w io.Writer, version string) error {
	driver := sarifDriver{Name: "fullsend-policy-lint", Version: version,
		InformationURI: "https://github.com/fullsend-ai/agent-sandbox/blob/main/docs/policy-lint.md", Rules: []sarifRule{}}
	index := map[string]int{}
	for _, ri := range r.Rules {
		if _, dup := index[ri.ID]; dup {
			continue
		}
		index[ri.ID] = len(driver.Rules)
		title := ri.Title
		if title == "" {
			title = ri.ID
		}
		desc := ri.Description
		if desc == "" {
			desc = title
		}
		driver.Rules = append(driver.Rules, sarifRule{
			ID: ri.ID, Name: ri.Name, ShortDescription: sarifText{title}, FullDescription: sarifText{desc},
			DefaultConfiguration: sarifConfig{sarifLevel(ri.Severity)},
			Properties:           map[string]any{"rego": ri.Namespace + "." + ri.Name},
		})
	}
	results := []sarifResult{}
	for _, f := range r.Findings {
		i, ok := index[f.RuleID]
		if !ok {
			i = len(driver.Rules)
			index[f.RuleID] = i
			driver.Rules = append(driver.Rules, sarifRule{ID: f.RuleID, Name: f.Rule,
				ShortDescription: sarifText{f.RuleID}, FullDescription: sarifText{f.RuleID},
				DefaultConfiguration: sarifConfig{sarifLevel(f.Severity)}})
		}
		file, line := f.location()
		loc := sarifLocation{PhysicalLocation: sarifPhysical{
			ArtifactLocation: sarifArtifact{URI: sarifURI(file)},
			Region:           &sarifRegion{StartLine: max(line, 1)},
		}}
		if f.Source != nil && f.Source.Column > 0 {
			loc.PhysicalLocation.Region.StartColumn = f.Source.Column
		}
		if f.PolicyPath != "" {
			loc.LogicalLocations = []sarifLogicalLoc{{FullyQualifiedName: f.PolicyPath, Kind: "member"}}
		}
		msg := f.Message
		if f.Source != nil {
			msg += " (policy " + f.Policy + ", " + f.PolicyPath + ")"
		}
		res := sarifResult{
			RuleID: f.RuleID, RuleIndex: i, Level: sarifLevel(f.Severity), Message: sarifText{msg},
			Locations:           []sarifLocation{loc},
			PartialFingerprints: map[string]string{"fullsendFinding/v1": f.fingerprint()},
			Properties:          map[string]any{"policy": f.Policy, "agent": f.Agent},
		}
		if f.Waived != "" {
			res.Suppressions = []sarifSuppression{{Kind: "external", Justification: f.Waived}}
		}
		results = append(results, res)
	}
	return encodeJSON(w, sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{{Tool: sarifTool{Driver: driver}, Results: results}},
	})
}
