package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle/oci"
)

// registryOptions binds oci.Options, the one registry and cache option
// group, for the subcommands that load or push bundles. Each command builds
// one client from it and hands that client to every consumer.
type registryOptions struct {
	oci.Options
	// limits bound the bundles loaded, local or pulled; every command that
	// reaches a registry also loads bundles, so they are bound here.
	limits limitOptions
}

func (o *registryOptions) BindFlags(fs *pflag.FlagSet) {
	if o.CacheDir == "" {
		o.CacheDir = oci.DefaultCacheDir()
	}
	o.Options.BindFlags(fs)
	o.limits.BindFlags(fs)
}

// client builds the shared registry client; an error names the flag.
func (o *registryOptions) client() (*oci.Client, error) {
	lim, err := o.limits.limits()
	if err != nil {
		return nil, err
	}
	o.Limits = lim
	c, err := o.Client()
	if err != nil {
		return nil, fieldsToFlags(err, oci.FlagNames)
	}
	return c, nil
}

// flagError is a library error whose option field names were replaced by
// the flags that set them.
type flagError struct {
	msg string
	err error
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return e.err }

// fieldsToFlags rewrites a library error that names option fields
// (Options.Transport, SecretFile, …) into one that names the command's
// flags. Only whole field names at the start of the message or after a
// space, quote or parenthesis are replaced.
func fieldsToFlags(err error, names ...map[string]string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, m := range names {
		for field, flag := range m {
			msg = replaceWord(msg, field, flag)
		}
	}
	if msg == err.Error() {
		return err
	}
	return &flagError{msg: msg, err: err}
}

func replaceWord(s, word, with string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, word)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(word)
		before := i == 0 || strings.ContainsRune(" \t(\"'`,", rune(s[i-1]))
		after := end == len(s) || !isIdent(s[end])
		b.WriteString(s[:i])
		if before && after {
			b.WriteString(with)
		} else {
			b.WriteString(word)
		}
		s = s[end:]
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
