package image

// DefaultOpenShellVersion is the OpenShell release the Containerfile pins
// (ARG OPENSHELL_VERSION) and therefore the default target of the policy
// compiler. TestContainerfilePins fails when the two disagree.
const DefaultOpenShellVersion = "v0.0.111"
