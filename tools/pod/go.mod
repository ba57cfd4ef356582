module klutch-kit.invalid/tools/pod

go 1.25.0
