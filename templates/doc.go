// Package templates holds fullsend's CI templates, embedded in the binary:
// a GitHub Actions reusable workflow and composite action, and a GitLab CI
// include template. Each verifies the agent-sandbox image in one job and runs
// `fullsend run` in the verified digest in the next.
//
// They are the CI's side of the verify and run stages (`fullsend templates
// write`). Of this module it imports only cienv (the CI kinds) and
// internal/atomicfile; it must
// never import the packages whose commands the templates call.
package templates
