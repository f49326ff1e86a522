package main

import (
	"flag"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/config"
)

// configFlag is the --config flag of the commands that read the
// configuration: added to the command's FlagSet, loaded after Parse.
type configFlag struct {
	m    *Main
	path string
}

// configFlag adds --config to fs.
func (m *Main) configFlag(fs *flag.FlagSet) *configFlag {
	f := &configFlag{m: m}
	fs.StringVar(&f.path, "config", "syncd.yaml", "configuration `file`")
	return f
}

// load reads, expands and validates the configuration file.
func (f *configFlag) load() (*config.Config, error) {
	return config.Load(f.path, f.m.Getenv)
}

// loadWithLog loads the configuration and makes the logger its log
// section asks for, writing to the command's standard error.
func (f *configFlag) loadWithLog() (*config.Config, *logrus.Logger, error) {
	cfg, err := f.load()
	if err != nil {
		return nil, nil, err
	}
	return cfg, newLogger(f.m, cfg.Log), nil
}
