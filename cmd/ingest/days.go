package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// daysValue is a duration flag that also takes whole days (1d, 7d), as
// --keep does, so that a period reads the same on every flag.
type daysValue time.Duration

func (d *daysValue) String() string { return time.Duration(*d).String() }

func (d *daysValue) Type() string { return "duration" }

func (d *daysValue) Set(s string) error {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 36500 {
			return fmt.Errorf("want whole days (1d) or a duration (90m, 36h), got %q", s)
		}
		*d = daysValue(time.Duration(n) * 24 * time.Hour)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want whole days (1d) or a duration (90m, 36h), got %q", s)
	}
	*d = daysValue(v)
	return nil
}

// daysVar is pflag's DurationVar, taking whole days too.
func daysVar(fs *pflag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var((*daysValue)(p), name, usage)
}
