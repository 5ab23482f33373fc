package image

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/fullsend-ai/agent-sandbox/gitrepo"
)

// Epoch sources, as reported by ResolveEpoch.
const (
	EpochFromEnv    = "SOURCE_DATE_EPOCH"
	EpochFromCommit = "git commit time"
	EpochZero       = "zero (no SOURCE_DATE_EPOCH, no git commit)"
)

// ResolveEpoch returns the timestamp written into the image: the
// SOURCE_DATE_EPOCH environment value, else the commit time of HEAD in dir,
// else the Unix epoch. An invalid SOURCE_DATE_EPOCH is an error, not a
// silent fallback.
func ResolveEpoch(ctx context.Context, dir string, getenv func(string) string) (time.Time, string, error) {
	if v := getenv("SOURCE_DATE_EPOCH"); v != "" {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs < 0 {
			return time.Time{}, "", fmt.Errorf("SOURCE_DATE_EPOCH=%q: want a non-negative integer number of seconds", v)
		}
		return time.Unix(secs, 0).UTC(), EpochFromEnv, nil
	}
	if out, err := gitrepo.HeadTime(ctx, dir); err == nil {
		if secs, err := strconv.ParseInt(out, 10, 64); err == nil {
			return time.Unix(secs, 0).UTC(), EpochFromCommit, nil
		}
	}
	return time.Unix(0, 0).UTC(), EpochZero, nil
}
