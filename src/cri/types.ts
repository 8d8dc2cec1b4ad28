// The CRI v1 message and enum types, re-exported from the generated files (src/cri/generated, `npm run gen:cri`).
// `X` is what a request accepts (all fields optional, misspelled keys are compile errors in object literals);
// `X__Output` is what a response holds (defaults filled in: int64 as decimal strings, enums as names, bytes as Buffers).
export type { AuthConfig, AuthConfig__Output } from './generated/runtime/v1/AuthConfig.js';
export type { CDIDevice, CDIDevice__Output } from './generated/runtime/v1/CDIDevice.js';
export type { Capability, Capability__Output } from './generated/runtime/v1/Capability.js';
export type { Container, Container__Output } from './generated/runtime/v1/Container.js';
export type { ContainerConfig, ContainerConfig__Output } from './generated/runtime/v1/ContainerConfig.js';
export type { ContainerFilter, ContainerFilter__Output } from './generated/runtime/v1/ContainerFilter.js';
export type { ContainerMetadata, ContainerMetadata__Output } from './generated/runtime/v1/ContainerMetadata.js';
export type { ContainerResources, ContainerResources__Output } from './generated/runtime/v1/ContainerResources.js';
export { ContainerState } from './generated/runtime/v1/ContainerState.js';
export type { ContainerState__Output } from './generated/runtime/v1/ContainerState.js';
export type { ContainerStateValue, ContainerStateValue__Output } from './generated/runtime/v1/ContainerStateValue.js';
export type { ContainerStatus, ContainerStatus__Output } from './generated/runtime/v1/ContainerStatus.js';
export type {
  ContainerStatusRequest,
  ContainerStatusRequest__Output,
} from './generated/runtime/v1/ContainerStatusRequest.js';
export type {
  ContainerStatusResponse,
  ContainerStatusResponse__Output,
} from './generated/runtime/v1/ContainerStatusResponse.js';
export type { ContainerUser, ContainerUser__Output } from './generated/runtime/v1/ContainerUser.js';
export type {
  CreateContainerRequest,
  CreateContainerRequest__Output,
} from './generated/runtime/v1/CreateContainerRequest.js';
export type {
  CreateContainerResponse,
  CreateContainerResponse__Output,
} from './generated/runtime/v1/CreateContainerResponse.js';
export type { DNSConfig, DNSConfig__Output } from './generated/runtime/v1/DNSConfig.js';
export type { Device, Device__Output } from './generated/runtime/v1/Device.js';
export type { ExecSyncRequest, ExecSyncRequest__Output } from './generated/runtime/v1/ExecSyncRequest.js';
export type { ExecSyncResponse, ExecSyncResponse__Output } from './generated/runtime/v1/ExecSyncResponse.js';
export type {
  FilesystemIdentifier,
  FilesystemIdentifier__Output,
} from './generated/runtime/v1/FilesystemIdentifier.js';
export type { FilesystemUsage, FilesystemUsage__Output } from './generated/runtime/v1/FilesystemUsage.js';
export type { HugepageLimit, HugepageLimit__Output } from './generated/runtime/v1/HugepageLimit.js';
export type { IDMapping, IDMapping__Output } from './generated/runtime/v1/IDMapping.js';
export type { Image, Image__Output } from './generated/runtime/v1/Image.js';
export type { ImageFilter, ImageFilter__Output } from './generated/runtime/v1/ImageFilter.js';
export type { ImageFsInfoRequest, ImageFsInfoRequest__Output } from './generated/runtime/v1/ImageFsInfoRequest.js';
export type { ImageFsInfoResponse, ImageFsInfoResponse__Output } from './generated/runtime/v1/ImageFsInfoResponse.js';
export type { ImageSpec, ImageSpec__Output } from './generated/runtime/v1/ImageSpec.js';
export type { ImageStatusRequest, ImageStatusRequest__Output } from './generated/runtime/v1/ImageStatusRequest.js';
export type { ImageStatusResponse, ImageStatusResponse__Output } from './generated/runtime/v1/ImageStatusResponse.js';
export type { Int64Value, Int64Value__Output } from './generated/runtime/v1/Int64Value.js';
export type { KeyValue, KeyValue__Output } from './generated/runtime/v1/KeyValue.js';
export type {
  LinuxContainerConfig,
  LinuxContainerConfig__Output,
} from './generated/runtime/v1/LinuxContainerConfig.js';
export type {
  LinuxContainerResources,
  LinuxContainerResources__Output,
} from './generated/runtime/v1/LinuxContainerResources.js';
export type {
  LinuxContainerSecurityContext,
  LinuxContainerSecurityContext__Output,
} from './generated/runtime/v1/LinuxContainerSecurityContext.js';
export type { LinuxContainerUser, LinuxContainerUser__Output } from './generated/runtime/v1/LinuxContainerUser.js';
export type {
  LinuxPodSandboxConfig,
  LinuxPodSandboxConfig__Output,
} from './generated/runtime/v1/LinuxPodSandboxConfig.js';
export type {
  LinuxPodSandboxStatus,
  LinuxPodSandboxStatus__Output,
} from './generated/runtime/v1/LinuxPodSandboxStatus.js';
export type {
  LinuxSandboxSecurityContext,
  LinuxSandboxSecurityContext__Output,
} from './generated/runtime/v1/LinuxSandboxSecurityContext.js';
export type {
  ListContainersRequest,
  ListContainersRequest__Output,
} from './generated/runtime/v1/ListContainersRequest.js';
export type {
  ListContainersResponse,
  ListContainersResponse__Output,
} from './generated/runtime/v1/ListContainersResponse.js';
export type { ListImagesRequest, ListImagesRequest__Output } from './generated/runtime/v1/ListImagesRequest.js';
export type { ListImagesResponse, ListImagesResponse__Output } from './generated/runtime/v1/ListImagesResponse.js';
export type {
  ListPodSandboxRequest,
  ListPodSandboxRequest__Output,
} from './generated/runtime/v1/ListPodSandboxRequest.js';
export type {
  ListPodSandboxResponse,
  ListPodSandboxResponse__Output,
} from './generated/runtime/v1/ListPodSandboxResponse.js';
export type { Mount, Mount__Output } from './generated/runtime/v1/Mount.js';
export { MountPropagation } from './generated/runtime/v1/MountPropagation.js';
export type { MountPropagation__Output } from './generated/runtime/v1/MountPropagation.js';
export type { Namespace, Namespace__Output } from './generated/runtime/v1/Namespace.js';
export { NamespaceMode } from './generated/runtime/v1/NamespaceMode.js';
export type { NamespaceMode__Output } from './generated/runtime/v1/NamespaceMode.js';
export type { NamespaceOption, NamespaceOption__Output } from './generated/runtime/v1/NamespaceOption.js';
export type { PodIP, PodIP__Output } from './generated/runtime/v1/PodIP.js';
export type { PodSandbox, PodSandbox__Output } from './generated/runtime/v1/PodSandbox.js';
export type { PodSandboxConfig, PodSandboxConfig__Output } from './generated/runtime/v1/PodSandboxConfig.js';
export type { PodSandboxFilter, PodSandboxFilter__Output } from './generated/runtime/v1/PodSandboxFilter.js';
export type { PodSandboxMetadata, PodSandboxMetadata__Output } from './generated/runtime/v1/PodSandboxMetadata.js';
export type {
  PodSandboxNetworkStatus,
  PodSandboxNetworkStatus__Output,
} from './generated/runtime/v1/PodSandboxNetworkStatus.js';
export { PodSandboxState } from './generated/runtime/v1/PodSandboxState.js';
export type { PodSandboxState__Output } from './generated/runtime/v1/PodSandboxState.js';
export type {
  PodSandboxStateValue,
  PodSandboxStateValue__Output,
} from './generated/runtime/v1/PodSandboxStateValue.js';
export type { PodSandboxStatus, PodSandboxStatus__Output } from './generated/runtime/v1/PodSandboxStatus.js';
export type {
  PodSandboxStatusRequest,
  PodSandboxStatusRequest__Output,
} from './generated/runtime/v1/PodSandboxStatusRequest.js';
export type {
  PodSandboxStatusResponse,
  PodSandboxStatusResponse__Output,
} from './generated/runtime/v1/PodSandboxStatusResponse.js';
export type { PortMapping, PortMapping__Output } from './generated/runtime/v1/PortMapping.js';
export { Protocol } from './generated/runtime/v1/Protocol.js';
export type { Protocol__Output } from './generated/runtime/v1/Protocol.js';
export type { PullImageRequest, PullImageRequest__Output } from './generated/runtime/v1/PullImageRequest.js';
export type { PullImageResponse, PullImageResponse__Output } from './generated/runtime/v1/PullImageResponse.js';
export type {
  RemoveContainerRequest,
  RemoveContainerRequest__Output,
} from './generated/runtime/v1/RemoveContainerRequest.js';
export type {
  RemoveContainerResponse,
  RemoveContainerResponse__Output,
} from './generated/runtime/v1/RemoveContainerResponse.js';
export type { RemoveImageRequest, RemoveImageRequest__Output } from './generated/runtime/v1/RemoveImageRequest.js';
export type { RemoveImageResponse, RemoveImageResponse__Output } from './generated/runtime/v1/RemoveImageResponse.js';
export type {
  RemovePodSandboxRequest,
  RemovePodSandboxRequest__Output,
} from './generated/runtime/v1/RemovePodSandboxRequest.js';
export type {
  RemovePodSandboxResponse,
  RemovePodSandboxResponse__Output,
} from './generated/runtime/v1/RemovePodSandboxResponse.js';
export type {
  RunPodSandboxRequest,
  RunPodSandboxRequest__Output,
} from './generated/runtime/v1/RunPodSandboxRequest.js';
export type {
  RunPodSandboxResponse,
  RunPodSandboxResponse__Output,
} from './generated/runtime/v1/RunPodSandboxResponse.js';
export type { RuntimeCondition, RuntimeCondition__Output } from './generated/runtime/v1/RuntimeCondition.js';
export type { RuntimeFeatures, RuntimeFeatures__Output } from './generated/runtime/v1/RuntimeFeatures.js';
export type { RuntimeHandler, RuntimeHandler__Output } from './generated/runtime/v1/RuntimeHandler.js';
export type {
  RuntimeHandlerFeatures,
  RuntimeHandlerFeatures__Output,
} from './generated/runtime/v1/RuntimeHandlerFeatures.js';
export type { RuntimeStatus, RuntimeStatus__Output } from './generated/runtime/v1/RuntimeStatus.js';
export type { SELinuxOption, SELinuxOption__Output } from './generated/runtime/v1/SELinuxOption.js';
export type { SecurityProfile, SecurityProfile__Output } from './generated/runtime/v1/SecurityProfile.js';
export type {
  StartContainerRequest,
  StartContainerRequest__Output,
} from './generated/runtime/v1/StartContainerRequest.js';
export type {
  StartContainerResponse,
  StartContainerResponse__Output,
} from './generated/runtime/v1/StartContainerResponse.js';
export type { StatusRequest, StatusRequest__Output } from './generated/runtime/v1/StatusRequest.js';
export type { StatusResponse, StatusResponse__Output } from './generated/runtime/v1/StatusResponse.js';
export type {
  StopContainerRequest,
  StopContainerRequest__Output,
} from './generated/runtime/v1/StopContainerRequest.js';
export type {
  StopContainerResponse,
  StopContainerResponse__Output,
} from './generated/runtime/v1/StopContainerResponse.js';
export type {
  StopPodSandboxRequest,
  StopPodSandboxRequest__Output,
} from './generated/runtime/v1/StopPodSandboxRequest.js';
export type {
  StopPodSandboxResponse,
  StopPodSandboxResponse__Output,
} from './generated/runtime/v1/StopPodSandboxResponse.js';
export { SupplementalGroupsPolicy } from './generated/runtime/v1/SupplementalGroupsPolicy.js';
export type { SupplementalGroupsPolicy__Output } from './generated/runtime/v1/SupplementalGroupsPolicy.js';
export type { UInt64Value, UInt64Value__Output } from './generated/runtime/v1/UInt64Value.js';
export type { UserNamespace, UserNamespace__Output } from './generated/runtime/v1/UserNamespace.js';
export type { VersionRequest, VersionRequest__Output } from './generated/runtime/v1/VersionRequest.js';
export type { VersionResponse, VersionResponse__Output } from './generated/runtime/v1/VersionResponse.js';
export type {
  WindowsContainerConfig,
  WindowsContainerConfig__Output,
} from './generated/runtime/v1/WindowsContainerConfig.js';
export type {
  WindowsContainerResources,
  WindowsContainerResources__Output,
} from './generated/runtime/v1/WindowsContainerResources.js';
export type {
  WindowsContainerSecurityContext,
  WindowsContainerSecurityContext__Output,
} from './generated/runtime/v1/WindowsContainerSecurityContext.js';
export type {
  WindowsCpuGroupAffinity,
  WindowsCpuGroupAffinity__Output,
} from './generated/runtime/v1/WindowsCpuGroupAffinity.js';
export type {
  WindowsNamespaceOption,
  WindowsNamespaceOption__Output,
} from './generated/runtime/v1/WindowsNamespaceOption.js';
export type {
  WindowsPodSandboxConfig,
  WindowsPodSandboxConfig__Output,
} from './generated/runtime/v1/WindowsPodSandboxConfig.js';
export type {
  WindowsSandboxSecurityContext,
  WindowsSandboxSecurityContext__Output,
} from './generated/runtime/v1/WindowsSandboxSecurityContext.js';
export {
  _runtime_v1_SecurityProfile_ProfileType as SecurityProfileType,
  type _runtime_v1_SecurityProfile_ProfileType__Output as SecurityProfileType__Output,
} from './generated/runtime/v1/SecurityProfile.js';
