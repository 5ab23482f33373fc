package cienv

// Variables Claude Code reads to reach Anthropic models on Google Vertex AI
// (https://docs.claude.com/en/docs/claude-code/google-vertex-ai), and the
// project variables of Google's own tools as fallbacks.
const (
	AnthropicVertexProject = "ANTHROPIC_VERTEX_PROJECT_ID"
	GoogleCloudProject     = "GOOGLE_CLOUD_PROJECT"
	CloudMLRegion          = "CLOUD_ML_REGION"
)

// VertexProject is the Google Cloud project the job's model calls are billed
// to: ANTHROPIC_VERTEX_PROJECT_ID, else GOOGLE_CLOUD_PROJECT.
func (e Env) VertexProject() Value { return e.firstValue(AnthropicVertexProject, GoogleCloudProject) }

// VertexRegion is the Vertex AI location of the job's model calls:
// CLOUD_ML_REGION (a region such as us-east5, or global).
func (e Env) VertexRegion() Value {
	return Value{Value: e.get(CloudMLRegion), From: CloudMLRegion}
}

// Variables the AWS SDK (and Claude Code on Bedrock) reads for the region.
const (
	AWSRegionVar        = "AWS_REGION"
	AWSDefaultRegionVar = "AWS_DEFAULT_REGION"
)

// AWSRegion is the AWS region of the job's Bedrock calls: AWS_REGION, else
// AWS_DEFAULT_REGION.
func (e Env) AWSRegion() Value { return e.firstValue(AWSRegionVar, AWSDefaultRegionVar) }

// firstValue is the value of the first of keys that is set, naming it; when none
// is, an empty value naming the first key, the one to set.
func (e Env) firstValue(keys ...string) Value {
	for _, k := range keys {
		if v := e.get(k); v != "" {
			return Value{Value: v, From: k}
		}
	}
	return Value{From: keys[0]}
}
