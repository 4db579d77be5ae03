// Package publish uploads a finished run — run.json, the reports and the
// chart files that report.WriteAll wrote into a directory — to Amazon S3 or
// any S3-compatible object store (MinIO, versitygw, Ceph, R2, ...), and
// returns the address of the uploaded report.html for alerts and CI logs.
//
// A destination is written as a URL, s3://BUCKET/PREFIX; each file under
// the directory becomes the object PREFIX/RELATIVE/PATH with a content type
// that lets a browser open it (text/html for the report, image/svg+xml for
// the charts, application/json for the run file).
//
//	dest, err := publish.Parse("s3://perf-runs/nightly/2026-11-29")
//	if err != nil { ... }
//	res, err := publish.Upload(ctx, dest, "out", publish.Options{})
//	if err != nil { ... } // names every file that did not upload
//	fmt.Println(res.ReportURL)
//
// Download reads published files back (tokenpulse merge s3://...): it
// lists a prefix, keeps the names a filter accepts, refuses objects beyond
// its Limits before writing anything, and copies the rest into a local
// directory.
//
// Credentials and the endpoint come from Options, or else from the standard
// AWS environment variables: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, AWS_REGION (or AWS_DEFAULT_REGION), and
// AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL) for a server other than AWS
// (for MinIO: AWS_ENDPOINT_URL_S3=http://127.0.0.1:9000). When neither
// gives keys, the shared credentials file (~/.aws/credentials, AWS_PROFILE)
// is read. A custom endpoint is addressed path-style
// (http://HOST/BUCKET/KEY) and spoken to over plain HTTP when its URL says
// http://.
//
// Nothing is lost on failure: each file is retried with exponential backoff
// when the error is one that can pass (network errors, 5xx, 429, throttling),
// every file is tried even when one fails, the error names each file that
// did not upload and why, and the local files are only read, never moved or
// changed. report.html is uploaded last, so the link never points at a
// report whose charts are still missing.
//
// No redirect is followed (package origin's rule; minio-go's client hands
// every 3xx back): the signed requests and the files go to the endpoint
// and nowhere else.
//
// Upload is safe for concurrent use; a Dest is a plain value.
package publish
