module github.com/syncd-io/syncd

go 1.26.0

require (
	github.com/sirupsen/logrus v1.10.2
	golang.org/x/time v0.16.0
)

require golang.org/x/sys v0.48.0 // indirect
