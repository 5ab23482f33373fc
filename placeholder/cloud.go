package placeholder

import (
	"errors"
	"regexp"
	"sync"
)

// Cloud placeholders: where a model provider's API lives and whose account
// pays for it. They pin the model API to the job's own project and region,
// so it cannot double as an exfiltration channel to another account.
const (
	// GCPRegion is a Google Cloud location: a region such as us-east5 or
	// europe-west1, or "global".
	GCPRegion = "GCP_REGION"
	// GCPProject is a Google Cloud project id.
	GCPProject = "GCP_PROJECT"
	// AWSRegion is an AWS region such as us-east-1.
	AWSRegion = "AWS_REGION"
)

// FieldHostLabel is a placeholder inside one label of an endpoint host, such
// as {{GCP_REGION}}-aiplatform.googleapis.com: its value is a DNS label
// fragment that can neither add a label nor act as a glob.
const FieldHostLabel Field = FieldAllowedIP + 1

// gcpRegion is Google's region syntax: a geography ("us", "europe",
// "northamerica", "me") and a direction ("east", "central", "southwest")
// with a number, e.g. us-east5, europe-west1, asia-southeast1,
// northamerica-northeast2; or the global location. See
// https://cloud.google.com/compute/docs/regions-zones (region names).
var gcpRegion = lazyRegexp(`^(?:global|[a-z]{2,15}-[a-z]{4,10}[1-9][0-9]?)$`)

// gcpProject is Google's project id syntax: 6 to 30 characters, lowercase
// letters, digits and hyphens, starting with a letter and not ending with a
// hyphen. See https://cloud.google.com/resource-manager/docs/creating-managing-projects
// (project ID requirements).
var gcpProject = lazyRegexp(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)

// awsRegion is AWS's region syntax: us-east-1, eu-central-1, us-gov-west-1,
// ap-southeast-2. See https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-regions.html.
var awsRegion = lazyRegexp(`^[a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]{4,10}-[1-9]$`)

// lazyRegexp compiles expr on first use: every command of the binary
// initialises this package, few of them validate placeholder values.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

func matching(re func() *regexp.Regexp, msg string) func(string) error {
	return func(v string) error {
		if !re().MatchString(v) {
			return errors.New(msg)
		}
		return nil
	}
}
