module github.com/nros-go/nros

go 1.26.0

require (
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.49.0
)
