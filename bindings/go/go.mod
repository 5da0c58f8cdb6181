module github.com/smd-project/smd/bindings/go

go 1.24
