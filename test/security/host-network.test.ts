// The suites that add links to this machine (a veth pair to a stand-in LAN device), one after
// another in one file, so one worker runs them: each counts the machine's addresses, which the
// others change. vitest.config.ts runs this file after the browser files (Chromium drops the
// requests it has in flight when the machine's network changes, ERR_NETWORK_CHANGED) and the
// other security files (whose probers try every address of the machine), beside the rest.
import { describe } from 'vitest';
import { jailNetworkNewAddress } from './jail-network-new-address.ts';
import { jailNetworkReach } from './jail-network-reach.ts';
import { jailUnprivileged } from './jail-unprivileged.ts';

describe('jail-network-reach', jailNetworkReach);
describe('jail-network-new-address', jailNetworkNewAddress);
describe('jail-unprivileged', jailUnprivileged);
