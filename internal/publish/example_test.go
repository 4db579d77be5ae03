package publish_test

import (
	"fmt"

	"github.com/tokenpulse/tokenpulse/internal/publish"
)

func ExampleParse() {
	dest, err := publish.Parse("s3://perf-runs/nightly/2026-11-29/")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(dest.Bucket)
	fmt.Println(dest.Key("charts/gaps.svg"))
	fmt.Println(publish.ContentType("charts/gaps.svg"))
	// Output:
	// perf-runs
	// nightly/2026-11-29/charts/gaps.svg
	// image/svg+xml
}
