package publish

import (
	"fmt"
	"net/url"
	"path"
	"strings"
)

// Dest is where a run is published: a bucket and a key prefix.
type Dest struct {
	// Bucket is the bucket name.
	Bucket string
	// Prefix is the key prefix without leading or trailing slashes; ""
	// puts the files at the bucket's root.
	Prefix string
}

// Parse reads a destination written as s3://BUCKET or s3://BUCKET/PREFIX.
// Slashes around the prefix are dropped and repeated slashes inside it are
// collapsed; the bucket must be a valid S3 bucket name (3 to 63 lower-case
// letters, digits, dots and hyphens, starting and ending with a letter or
// digit).
func Parse(s string) (Dest, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Dest{}, fmt.Errorf("publish destination %q: %w", s, err)
	}
	if u.Scheme != "s3" {
		return Dest{}, fmt.Errorf("publish destination %q: want s3://BUCKET/PREFIX", s)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Port() != "" {
		return Dest{}, fmt.Errorf("publish destination %q: only s3://BUCKET/PREFIX is allowed (no credentials, port, query or fragment; credentials come from the environment)", s)
	}
	if err := checkBucket(u.Host); err != nil {
		return Dest{}, fmt.Errorf("publish destination %q: %w", s, err)
	}
	prefix := strings.Trim(path.Clean("/"+u.Path), "/")
	for _, seg := range strings.Split(prefix, "/") {
		if seg == ".." {
			return Dest{}, fmt.Errorf("publish destination %q: prefix may not contain ..", s)
		}
	}
	return Dest{Bucket: u.Host, Prefix: prefix}, nil
}

// String writes d back as s3://BUCKET/PREFIX.
func (d Dest) String() string {
	if d.Prefix == "" {
		return "s3://" + d.Bucket
	}
	return "s3://" + d.Bucket + "/" + d.Prefix
}

// Key returns the object key of the file at the slash-separated path rel
// under the published directory.
func (d Dest) Key(rel string) string {
	if d.Prefix == "" {
		return rel
	}
	return d.Prefix + "/" + rel
}

func checkBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket name %q must be 3 to 63 characters", b)
	}
	for i, c := range b {
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		switch {
		case alnum:
		case (c == '-' || c == '.') && i > 0 && i < len(b)-1:
		default:
			return fmt.Errorf("bucket name %q: only lower-case letters, digits, '.' and '-' (not at either end)", b)
		}
	}
	if strings.Contains(b, "..") {
		return fmt.Errorf("bucket name %q may not contain two dots in a row", b)
	}
	return nil
}
