/**
 * Device discovery, configuration and transport selection: what devices
 * exist ({@link org.rdmapanama.device.RdmaDevices}), what they can do
 * ({@link org.rdmapanama.device.DeviceCapabilities}, {@link org.rdmapanama.device.Transport}),
 * and which device, port and GID a configuration picks
 * ({@link org.rdmapanama.device.Selection}). Snapshots only: nothing here
 * holds a native resource.
 */
package org.rdmapanama.device;
