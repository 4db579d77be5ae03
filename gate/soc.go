package gate

import "strings"

// OfSoC returns the tier whose SoCs list one of names (a device's SoC
// model, manufacturer and model, board platform), compared without
// regard to case or surrounding space; false when no tier lists any.
// The first tier in file order that lists one wins.
func (t Tiers) OfSoC(names ...string) (string, bool) {
	for _, x := range t.list {
		for _, soc := range x.SoCs {
			for _, n := range names {
				if n = strings.TrimSpace(n); n != "" && strings.EqualFold(n, strings.TrimSpace(soc)) {
					return x.Name, true
				}
			}
		}
	}
	return "", false
}
