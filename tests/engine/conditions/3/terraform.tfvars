prefix = "pod-"
