package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/internal/android"
	"github.com/tokenpulse/tokenpulse/runfile"
)

func init() { commands = append(commands, newDevicesCmd) }

func newDevicesCmd() *cobra.Command {
	var (
		tiersFile string
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List the attached Android devices (through adb) and the tier each one's SoC maps to",
		Long: `List the Android devices adb sees, each with its model, manufacturer,
Android version, build fingerprint, SoC (ro.soc.model, else
ro.board.platform), ABI, memory, and the tier its SoC maps to.

The SoC→tier map is the socs list of each tier in the tiers file (the
shipped one maps Snapdragon 8 Gen 3 to flagship, Dimensity 8200 to
mainstream and Snapdragon 4 Gen 2 to entry); --tiers FILE gives your own
(tokenpulse bench --adb reads the same file). A SoC in no list gets no
tier, with a note. Needs adb on PATH (Debian: apt-get install adb).`,
		Example: `  tokenpulse devices
  tokenpulse devices --tiers my-tiers.yaml --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tiers, err := loadTiers(tiersFile)
			if err != nil {
				return usageErr(err)
			}
			list, err := android.Devices(cmd.Context(), "")
			if err != nil {
				return withCode(exitFailure, err)
			}
			var facts []*runfile.Android
			var notReady []android.Attached
			for _, d := range list {
				if d.State != "device" {
					notReady = append(notReady, d)
					continue
				}
				f, err := android.Describe(cmd.Context(), &android.ADB{Serial: d.Serial}, tiers)
				if err != nil {
					return withCode(exitFailure, err)
				}
				facts = append(facts, f)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if facts == nil {
					facts = []*runfile.Android{}
				}
				return enc.Encode(facts)
			}
			writeDevices(cmd.OutOrStdout(), facts, notReady)
			return nil
		},
	}
	cmd.Flags().StringVar(&tiersFile, "tiers", "", "tiers file (YAML) whose socs lists map SoCs to tiers (default: the shipped one)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the devices as JSON (the device block's android facts)")
	return cmd
}

// loadTiers returns the tiers of file, the shipped ones for "".
func loadTiers(file string) (gate.Tiers, error) {
	if file == "" {
		return gate.DefaultTiers(), nil
	}
	return gate.LoadTiers(file)
}

// writeDevices prints the devices as a table, with their tier notes and
// the devices adb lists but cannot use.
func writeDevices(w io.Writer, facts []*runfile.Android, notReady []android.Attached) {
	if len(facts) == 0 && len(notReady) == 0 {
		fmt.Fprintln(w, "no Android device attached (adb devices -l lists none): connect one with USB debugging on, or adb connect HOST:PORT")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERIAL\tMANUFACTURER\tMODEL\tANDROID\tSOC\tABI\tMEMORY\tTIER")
	for _, d := range facts {
		tier := d.Tier
		if tier == "" {
			tier = "-"
		}
		soc := d.SoC
		if soc == "" {
			soc = d.Platform
		} else if d.Platform != "" {
			soc += " (" + d.Platform + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.1f GiB\t%s\n", d.Serial, d.Manufacturer, d.Model, d.AndroidVersion, soc, d.ABI, float64(d.MemoryBytes)/(1<<30), tier)
	}
	tw.Flush()
	for _, d := range facts {
		if d.Fingerprint != "" {
			fmt.Fprintf(w, "%s: fingerprint %s\n", d.Serial, d.Fingerprint)
		}
		if d.TierNote != "" {
			fmt.Fprintf(w, "%s: %s\n", d.Serial, d.TierNote)
		}
	}
	for _, d := range notReady {
		fmt.Fprintf(w, "%s: %s (not usable: accept the USB debugging prompt on the device, or reconnect it)\n", d.Serial, d.State)
	}
}
