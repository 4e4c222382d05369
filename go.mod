module github.com/nros-go/nros

go 1.26
