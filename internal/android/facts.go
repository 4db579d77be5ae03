package android

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/internal/device"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// Describe reads what the device is over adb: its properties (one
// getprop) and its memory (/proc/meminfo), with the tier its SoC maps to
// in tiers.
func Describe(ctx context.Context, a *ADB, tiers gate.Tiers) (*runfile.Android, error) {
	props, err := a.Shell(ctx, "getprop")
	if err != nil {
		return nil, err
	}
	mem, err := a.Shell(ctx, "cat /proc/meminfo")
	if err != nil {
		return nil, err
	}
	return facts(a.Serial, parseProps(props), mem, tiers), nil
}

// facts is the device that properties p and the meminfo text describe.
func facts(serial string, p map[string]string, meminfo string, tiers gate.Tiers) *runfile.Android {
	d := &runfile.Android{
		Serial:         serial,
		Manufacturer:   p["ro.product.manufacturer"],
		Model:          p["ro.product.model"],
		AndroidVersion: p["ro.build.version.release"],
		SDK:            p["ro.build.version.sdk"],
		Fingerprint:    p["ro.build.fingerprint"],
		Platform:       p["ro.board.platform"],
		ABI:            p["ro.product.cpu.abi"],
		MemoryBytes:    device.MemTotal(meminfo),
	}
	socModel, socMaker := p["ro.soc.model"], p["ro.soc.manufacturer"]
	d.SoC = strings.TrimSpace(socMaker + " " + socModel)
	names := []string{socModel, d.SoC, d.Platform}
	if tier, ok := tiers.OfSoC(names...); ok {
		d.Tier = tier
	} else {
		soc := d.SoC
		if soc == "" {
			soc = d.Platform
		}
		if soc == "" {
			soc = "an unnamed SoC (no ro.soc.model nor ro.board.platform)"
		}
		d.TierNote = fmt.Sprintf("no tier: %s is in no tier's socs list of the tiers file; add it there (--tiers FILE) or judge with --tier", soc)
	}
	return d
}

// parseProps parses getprop's "[key]: [value]" lines.
func parseProps(text string) map[string]string {
	p := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "]: [")
		if !ok || !strings.HasPrefix(k, "[") {
			continue
		}
		p[strings.TrimPrefix(k, "[")] = strings.TrimSuffix(strings.TrimRight(v, "\r"), "]")
	}
	return p
}

// Label is a one-line name of the device for reports and alerts:
// manufacturer, model and SoC.
func Label(d *runfile.Android) string {
	name := strings.TrimSpace(d.Manufacturer + " " + d.Model)
	if name == "" {
		name = d.Serial
	}
	if soc := firstOf(d.SoC, d.Platform); soc != "" {
		name += " (" + soc + ")"
	}
	return name
}

// OS names the firmware: Android version, SDK and build fingerprint.
func OS(d *runfile.Android) string {
	s := "Android " + firstOf(d.AndroidVersion, "?")
	if d.SDK != "" {
		s += " (SDK " + d.SDK + ")"
	}
	if d.Fingerprint != "" {
		s += " " + d.Fingerprint
	}
	return s
}

// Apply writes the device facts a into the run's device block: the
// block's Android, and its label (unless the user gave one), OS, CPU
// model, memory and tier (unless one was given) from a.
func Apply(dev *runfile.Device, a *runfile.Android) {
	if a == nil {
		return
	}
	dev.Android = a
	// The serial names the device (the hostname of every Android device
	// is "localhost"); the label, the history's device key, names the
	// model and Android version but not the build, so that runs before
	// and after a firmware update compare.
	dev.Hostname = a.Serial
	if dev.Label == "" {
		dev.Label = Label(a) + " / Android " + firstOf(a.AndroidVersion, "?")
	}
	dev.OS = OS(a)
	if soc := firstOf(a.SoC, a.Platform); soc != "" {
		dev.CPUModel = soc
	}
	if a.MemoryBytes > 0 {
		dev.MemoryBytes = a.MemoryBytes
	}
	if dev.Tier == "" {
		dev.Tier = a.Tier
	}
}

func firstOf(xs ...string) string {
	for _, x := range xs {
		if strings.TrimSpace(x) != "" {
			return strings.TrimSpace(x)
		}
	}
	return ""
}
