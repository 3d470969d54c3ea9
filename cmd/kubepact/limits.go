package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle/archive"
)

// limitOptions is the option group for the size limits a bundle is held
// to, local or pulled: Pacto's own limits by default, raisable for large
// APIs (a 13 MB OpenAPI document does not fit in 10 MiB).
type limitOptions struct {
	lim archive.Limits
}

// Flag names, one per archive limit.
const (
	flagMaxFileBytes  = "max-file-bytes"
	flagMaxTotalBytes = "max-total-bytes"
	flagMaxEntries    = "max-entries"
)

func (o *limitOptions) BindFlags(fs *pflag.FlagSet) {
	d := archive.DefaultLimits
	fs.Int64Var(&o.lim.MaxFileBytes, flagMaxFileBytes, d.MaxFileBytes, "largest file a bundle (local or pulled) may hold, in bytes; the default is Pacto's")
	fs.Int64Var(&o.lim.MaxTotalBytes, flagMaxTotalBytes, d.MaxTotalBytes, "largest total of a bundle's files, in bytes; the default is Pacto's")
	fs.IntVar(&o.lim.MaxEntries, flagMaxEntries, d.MaxEntries, "most files and directories a bundle may hold; the default is Pacto's")
}

// limits returns the limits, refusing values that are not positive: there
// is no "unlimited".
func (o *limitOptions) limits() (archive.Limits, error) {
	for _, f := range []struct {
		name string
		v    int64
		def  int64
	}{
		{flagMaxFileBytes, o.lim.MaxFileBytes, archive.DefaultLimits.MaxFileBytes},
		{flagMaxTotalBytes, o.lim.MaxTotalBytes, archive.DefaultLimits.MaxTotalBytes},
		{flagMaxEntries, int64(o.lim.MaxEntries), int64(archive.DefaultLimits.MaxEntries)},
	} {
		if f.v <= 0 {
			return archive.Limits{}, fmt.Errorf("--%s %d: want a positive number (default %d); there is no unlimited", f.name, f.v, f.def)
		}
	}
	return o.lim.WithDefaults(), nil
}

// explainLimit adds to a bundle's limit refusal the flag that raises the
// limit it broke.
func explainLimit(err error) error {
	var ae *archive.Error
	if err == nil || !errors.As(err, &ae) || !errors.Is(ae.Kind, archive.ErrLimit) {
		return err
	}
	flag := map[string]string{archive.LimitFile: flagMaxFileBytes, archive.LimitTotal: flagMaxTotalBytes, archive.LimitEntries: flagMaxEntries}[ae.Limit]
	if flag == "" {
		return err
	}
	return fmt.Errorf("%w (raise the limit with --%s)", err, flag)
}
