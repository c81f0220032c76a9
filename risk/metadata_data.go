package risk

import "net/netip"

// Cloud metadata endpoints: an HTTP request to one of these from inside a
// cloud machine or container returns its identity and, often, credentials.
// Each entry names the provider's documentation.

// metadataIPs are metadata endpoints reached by address.
var metadataIPs = map[netip.Addr]bool{
	// AWS EC2 IMDS (docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html),
	// Google Compute Engine (cloud.google.com/compute/docs/metadata/querying-metadata),
	// Azure IMDS (learn.microsoft.com/azure/virtual-machines/instance-metadata-service),
	// Oracle Cloud (docs.oracle.com/iaas/Content/Compute/Tasks/gettingmetadata.htm),
	// OpenStack (docs.openstack.org/nova/latest/user/metadata.html), DigitalOcean, Hetzner.
	netip.MustParseAddr("169.254.169.254"): true,
	// AWS EC2 IMDS over IPv6 (same AWS page, "IPv6 endpoint").
	netip.MustParseAddr("fd00:ec2::254"): true,
	// AWS ECS task metadata and container credentials
	// (docs.aws.amazon.com/AmazonECS/latest/developerguide/task-metadata-endpoint-v2.html).
	netip.MustParseAddr("169.254.170.2"): true,
	// AWS EKS Pod Identity agent, IPv4 and IPv6
	// (docs.aws.amazon.com/eks/latest/userguide/pod-id-agent-setup.html).
	netip.MustParseAddr("169.254.170.23"): true,
	netip.MustParseAddr("fd00:ec2::23"):   true,
	// Alibaba Cloud ECS (alibabacloud.com/help/en/ecs/user-guide/view-instance-metadata).
	netip.MustParseAddr("100.100.100.200"): true,
	// Azure WireServer, the VM agent's channel to the platform; a public
	// address, so only this table keeps it in
	// (learn.microsoft.com/azure/virtual-network/what-is-ip-address-168-63-129-16).
	netip.MustParseAddr("168.63.129.16"): true,
	// Oracle Compute Cloud@Customer and Oracle Cloud Classic metadata
	// (docs.oracle.com/en/cloud/cloud-at-customer/occ-get-started/retrieve-predefined-instance-metadata.html).
	netip.MustParseAddr("192.0.0.192"): true,
	// Tencent Cloud CVM, behind metadata.tencentyun.com
	// (intl.cloud.tencent.com/document/product/213/4934).
	netip.MustParseAddr("169.254.0.23"): true,
}

// metadataHosts are metadata endpoints reached by name (compared lower
// case, without a trailing dot).
var metadataHosts = map[string]bool{
	// Google Compute Engine (cloud.google.com/compute/docs/metadata/querying-metadata):
	// the full name, the short name the guest's resolver expands, and metadata.goog.
	"metadata.google.internal": true, "metadata": true, "metadata.goog": true,
	// AWS EC2 IMDS by name (docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html).
	"instance-data": true, "instance-data.ec2.internal": true,
	// Tencent Cloud CVM (intl.cloud.tencent.com/document/product/213/4934).
	"metadata.tencentyun.com": true,
}
