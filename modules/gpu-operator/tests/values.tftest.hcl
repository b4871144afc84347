# The operator's values on each cloud, planned with the Kubernetes and Helm
# providers mocked: no cluster is asked anything (`strata test` in this
# folder; tests/module_tests.rs runs it).

mock_provider "kubernetes" {}

mock_provider "helm" {
  source = "../tests/helm"
}

variables {
  cloud              = "azure"
  kubernetes_version = "1.33"
  gpu_operator = {
    version        = "v25.3.1"
    driver_version = "570.124.06"
  }
}

run "azure_leaves_the_driver_to_the_operator" {
  command = plan
  assert {
    condition     = output.values.driver.enabled && output.values.driver.version == "570.124.06"
    error_message = "AKS pools made by strata install no driver: the operator must."
  }
  assert {
    condition     = output.driver_version == "570.124.06"
    error_message = "The nodes run the operator's driver."
  }
}

run "eks_images_bring_the_driver_and_toolkit" {
  command = plan
  variables {
    cloud = "aws"
  }
  assert {
    condition     = !output.values.driver.enabled && !output.values.toolkit.enabled
    error_message = "EKS's NVIDIA AMIs ship the driver and the container toolkit."
  }
  assert {
    condition     = output.driver_version == null
    error_message = "The cloud's driver version is not the operator's to say."
  }
}

run "gke_reads_containerd_config_from_its_file_from_1_33" {
  command = plan
  variables {
    cloud = "gcp"
  }
  assert {
    condition     = output.values.toolkit.installDir == "/home/kubernetes/bin/nvidia"
    error_message = "GKE's driver installer puts the driver under /home/kubernetes/bin/nvidia."
  }
  assert {
    condition     = output.values.toolkit.env[0].value == "file" && output.values.cdi.enabled
    error_message = "GKE 1.33 and later: containerd's config from its file, devices through CDI."
  }
}

run "a_service_monitor_scrapes_the_operators_own_exporter" {
  command = plan
  variables {
    service_monitor = true
  }
  assert {
    condition     = output.values.dcgmExporter.serviceMonitor.enabled
    error_message = "The ServiceMonitor is the operator's exporter's."
  }
}

run "an_unknown_cloud_is_refused" {
  command = plan
  variables {
    cloud = "openstack"
  }
  expect_failures = [var.cloud]
}

run "applied_with_the_providers_mocked" {
  assert {
    condition     = helm_release.gpu_operator.namespace == "gpu-operator"
    error_message = "The release goes into the operator's namespace."
  }
  assert {
    condition     = output.version == "v25.3.1"
    error_message = "The release is pinned to the spec's version."
  }
  assert {
    condition     = output.revision == 1
    error_message = "The first install is revision 1."
  }
}
