package discover

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nyaruka/phonenumbers"

	"github.com/syncd-io/syncd/mapping"
)

// nationalRegions are the regions a number written without a country
// code is tried in, most likely first.
var nationalRegions = []string{"US", "GB", "DE", "FR", "CA", "AU", "NL", "ES", "IT", "CH", "AT", "BE", "IE", "SE", "DK", "NO", "PL", "IN", "BR", "MX", "NZ", "ZA", "SG", "JP"}

// GuessRegion picks the region phone numbers without a country code are
// read in, from samples: the country of the numbers written with one
// (+44 ...), else the region in which the most national numbers are valid
// (the first such in nationalRegions on a tie); US, mapping's default,
// when the samples tell nothing. It returns the region and why.
func GuessRegion(samples []string) (string, string) {
	return guessRegion(samples, "", "", false)
}

// guessRegion is GuessRegion preferring hint (the region the file's
// language implies, hintWhy saying so) among the regions where as many
// numbers are valid as in the best.
func guessRegion(samples []string, hint, hintWhy string, strong bool) (string, string) {
	intl := map[string]int{}
	valid, possible := map[string]int{}, map[string]int{}
	nNational := 0
	for _, s := range samples {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if strings.HasPrefix(s, "+") || strings.HasPrefix(s, "00") {
			num, err := phonenumbers.Parse("+"+strings.TrimLeft(strings.TrimPrefix(s, "+"), "0"), "ZZ")
			if err == nil && phonenumbers.IsPossibleNumber(num) {
				intl[phonenumbers.GetRegionCodeForCountryCode(int(num.GetCountryCode()))]++
			}
			continue
		}
		nNational++
		for _, r := range nationalRegions {
			num, err := phonenumbers.Parse(s, r)
			if err != nil || !phonenumbers.IsPossibleNumber(num) {
				continue
			}
			possible[r]++
			if phonenumbers.IsValidNumberForRegion(num, r) {
				valid[r]++
			}
		}
	}
	if nNational > 0 {
		// A country the samples with a country code name outweighs
		// validity: fictional and new ranges are not valid everywhere.
		score := map[string]int{}
		for r, n := range possible {
			score[r] = intl[r]*1000 + valid[r]*100 + n*10
		}
		if hint != "" && possible[hint] == nNational && intl[hint] == maxCount(intl) && (strong || valid[hint]*2 > nNational) {
			return hint, fmt.Sprintf("%d of %d numbers without a country code can be from there (%d valid), and %s", possible[hint], nNational, valid[hint], hintWhy)
		}
		if hint != "" && possible[hint] > 0 {
			top := 0
			for r := range possible {
				top = max(top, intl[r]*1000+valid[r]*100)
			}
			if intl[hint]*1000+valid[hint]*100 == top {
				return hint, fmt.Sprintf("%d of %d numbers without a country code are valid there, and %s", valid[hint], nNational, hintWhy)
			}
		}
		if r, _ := best(score); r != "" {
			why := fmt.Sprintf("%d of %d numbers without a country code are valid there", valid[r], nNational)
			if intl[r] > 0 {
				why = fmt.Sprintf("%d sample number(s) have its country code and %d of %d without one can be from there", intl[r], possible[r], nNational)
			}
			return r, why
		}
	}
	if r, n := best(intl); n > 0 {
		return r, fmt.Sprintf("%d sample numbers are from %s", n, r)
	}
	return mapping.DefaultRegion, "no sample told the region; " + mapping.DefaultRegion + " is the default (--region to change)"
}

// best is the region with the highest count, the first of
// nationalRegions (then alphabetical) on a tie.
func best(counts map[string]int) (string, int) {
	regions := make([]string, 0, len(counts))
	for r := range counts {
		regions = append(regions, r)
	}
	order := func(r string) int {
		for i, x := range nationalRegions {
			if x == r {
				return i
			}
		}
		return len(nationalRegions)
	}
	sort.Slice(regions, func(i, j int) bool {
		a, b := regions[i], regions[j]
		if counts[a] != counts[b] {
			return counts[a] > counts[b]
		}
		if order(a) != order(b) {
			return order(a) < order(b)
		}
		return a < b
	})
	if len(regions) == 0 {
		return "", 0
	}
	return regions[0], counts[regions[0]]
}

// maxCount is the highest count.
func maxCount(m map[string]int) int {
	n := 0
	for _, c := range m {
		n = max(n, c)
	}
	return n
}
