// Package depspin pins dependencies while the packages that use them are written.
package depspin

import (
	_ "cuelang.org/go/cue/cuecontext"
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/google/go-containerregistry/pkg/registry"
	_ "github.com/google/go-containerregistry/pkg/v1/remote"
	_ "github.com/google/go-containerregistry/pkg/v1/layout"
	_ "github.com/open-policy-agent/opa/v1/rego"
	_ "github.com/open-policy-agent/opa/v1/tester"
	_ "github.com/sigstore/cosign/v2/pkg/cosign"
	_ "github.com/sigstore/cosign/v2/pkg/oci/remote"
	_ "github.com/sigstore/sigstore/pkg/cryptoutils"
	_ "github.com/sigstore/sigstore/pkg/signature"
	_ "github.com/sigstore/sigstore-go/pkg/testing/ca"
	_ "github.com/spf13/cobra"
	_ "go.uber.org/goleak"
	_ "golang.org/x/mod/semver"
	_ "golang.org/x/sync/errgroup"
	_ "gopkg.in/yaml.v3"
)
