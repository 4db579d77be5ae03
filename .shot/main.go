package main

import (
	"context"
	"os"
	"time"

	"github.com/chromedp/chromedp"
)

func main() {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.NoSandbox, chromedp.WindowSize(1280, 1000), chromedp.Flag("disable-quic", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Navigate(os.Args[1])); err != nil {
		panic(err)
	}
	chromedp.Run(ctx, chromedp.Sleep(time.Second))
	buf, err := chromedp.Run(ctx, chromedp.Screenshot(os.Args[2]))
	if err != nil {
		panic(err)
	}
	os.WriteFile(os.Args[3], buf, 0o644)
}
