package main

import (
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func newRootCommand() *cobra.Command {
	logOpts := &logOptions{}
	root := &cobra.Command{
		Use:   "kubepact",
		Short: "MCP server, sidecar and operator for Pacto service contracts",
		Long: `kubepact lets AI agents author Pacto service contracts, call services
through their contracts, and understand a fleet of them, with the authority
the contract grants and no more.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			log, err := logOpts.logger()
			if err != nil {
				return err
			}
			cmd.SetContext(logr.NewContext(cmd.Context(), log))
			return nil
		},
	}
	logOpts.BindFlags(root.PersistentFlags())
	root.AddCommand(newSidecarCommand(), newVersionCommand())
	root.AddCommand(shapeCommands()...)
	return root
}

// logOptions is the logging option group: every subcommand logs the same way,
// structured, to stderr, through zap behind a logr.Logger.
type logOptions struct {
	level  string
	format string
}

func (o *logOptions) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.level, "log-level", "info", "log verbosity: error, info, debug (debug is logr V(1))")
	fs.StringVar(&o.format, "log-format", "console", "log encoding on stderr: console or json")
}

func (o *logOptions) logger() (logr.Logger, error) {
	var lvl zapcore.Level
	switch o.level {
	case "error":
		lvl = zapcore.ErrorLevel
	case "info":
		lvl = zapcore.InfoLevel
	case "debug":
		lvl = zapcore.DebugLevel
	default:
		return logr.Discard(), fmt.Errorf("--log-level %q is not accepted; use error, info or debug", o.level)
	}
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	switch o.format {
	case "console":
		enc = zapcore.NewConsoleEncoder(encCfg)
	case "json":
		enc = zapcore.NewJSONEncoder(encCfg)
	default:
		return logr.Discard(), fmt.Errorf("--log-format %q is not accepted; use console or json", o.format)
	}
	core := zapcore.NewCore(enc, zapcore.Lock(os.Stderr), lvl)
	return zapr.NewLogger(zap.New(core)), nil
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the kubepact version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "kubepact %s\n", version)
			return err
		},
	}
}
