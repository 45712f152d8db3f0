-- Wireshark dissector for VI/TCP (draft-dicecco-vitcp-01), the second wire of softrnic's
-- VIPL (docs/vipl.md "VI/TCP"). Every segment type of the draft is decoded: the segment
-- header (§3.2), the RDMA header of RDMA Write and Read Request segments (§3.4), the CE header
-- with its options of ConnectRequest / ConnectAccept (§3.3), the payload, and the CRC trailer
-- (§3.5) of a CE segment with the CRC option and of every segment of a connection whose
-- ConnectRequest and ConnectAccept both had it (§3.6). Segments are found in the TCP stream by
-- their Segment Length.
--
--   tshark -X lua_script:tools/wireshark/vitcp.lua -o vitcp.ports:7447-7455 -Y vitcp -r f.pcap
local p = Proto("vitcp", "VI/TCP (Internet VI)")

local types = {
  [0] = "Send", [1] = "RdmaWrite", [2] = "RdmaReadRequest", [3] = "RdmaReadResponse",
  [4] = "NOP", [5] = "ConnectRequest", [6] = "ConnectAccept", [7] = "ConnectReject",
  [8] = "ConnectNoMatch",
}
local opt_types = { [0] = "End of Option List", [1] = "CRC", [2] = "Urgent Marker",
  [0x8001] = "softrnic: NIC address", [0x8002] = "softrnic: requester's wait (ms)",
  [0x8003] = "softrnic: redirect to NIC" }

local f = p.fields
f.version = ProtoField.uint8("vitcp.version", "Version")
f.flags = ProtoField.uint8("vitcp.flags", "Type/Flags", base.HEX)
f.eom = ProtoField.bool("vitcp.flags.eom", "End of Message", 8, nil, 0x80)
f.idv = ProtoField.bool("vitcp.flags.idv", "Immediate Data Valid", 8, nil, 0x40)
f.tre = ProtoField.bool("vitcp.flags.tre", "Transmit Error", 8, nil, 0x20)
f.type = ProtoField.uint8("vitcp.type", "Type", base.DEC, types, 0x1F)
f.seglen = ProtoField.uint16("vitcp.seglen", "Segment Length")
f.offset = ProtoField.uint32("vitcp.offset", "Data Offset")
f.imm = ProtoField.uint32("vitcp.imm", "Immediate Data", base.HEX)
f.msgno = ProtoField.uint32("vitcp.msgno", "Message Number")
f.ack = ProtoField.uint32("vitcp.ack", "Message ACK")
f.rxposted = ProtoField.uint16("vitcp.rxposted", "Rx Descriptors Posted")
f.rerr = ProtoField.uint16("vitcp.rerr", "Remote Error Code", base.HEX)
f.iserr = ProtoField.uint16("vitcp.rerr.is", "IS Error Code", base.HEX, nil, 0xFF00)
f.ute = ProtoField.bool("vitcp.rerr.ute", "Unrecoverable Transport Error", 16, nil, 0x0004)
f.vde = ProtoField.bool("vitcp.rerr.vde", "VI Descriptor Error", 16, nil, 0x0002)
f.mpe = ProtoField.bool("vitcp.rerr.mpe", "RDMA Memory Protection Error", 16, nil, 0x0001)
f.raddr = ProtoField.uint64("vitcp.rdma.addr", "RDMA Address", base.HEX)
f.rhandle = ProtoField.uint32("vitcp.rdma.handle", "Registered Memory Handle", base.HEX)
f.rlen = ProtoField.uint32("vitcp.rdma.length", "RDMA Length")
f.attrs = ProtoField.uint16("vitcp.ce.attrs", "Calling Attributes", base.HEX)
f.a_ur = ProtoField.bool("vitcp.ce.ur", "Unreliable", 16, nil, 0x0001)
f.a_rd = ProtoField.bool("vitcp.ce.rd", "Reliable Delivery", 16, nil, 0x0002)
f.a_rr = ProtoField.bool("vitcp.ce.rr", "Reliable Reception", 16, nil, 0x0004)
f.a_rwe = ProtoField.bool("vitcp.ce.rdmaw", "RDMA Write Enable", 16, nil, 0x0008)
f.a_rre = ProtoField.bool("vitcp.ce.rdmar", "RDMA Read Enable", 16, nil, 0x0010)
f.a_dfc = ProtoField.bool("vitcp.ce.dfc", "Descriptor Flow Control", 16, nil, 0x0020)
f.a_p2p = ProtoField.bool("vitcp.ce.p2p", "Peer-to-peer", 16, nil, 0x0040)
f.callinglen = ProtoField.uint16("vitcp.ce.calling_len", "Calling Discriminator Length")
f.mtu = ProtoField.uint32("vitcp.ce.mtu", "MTU Size")
f.calling = ProtoField.bytes("vitcp.ce.calling", "Calling Discriminator")
f.window = ProtoField.uint16("vitcp.ce.read_window", "Calling RDMA Read Window")
f.calledlen = ProtoField.uint16("vitcp.ce.called_len", "Called Discriminator Length")
f.called = ProtoField.bytes("vitcp.ce.called", "Called Discriminator")
f.opt = ProtoField.uint16("vitcp.ce.option", "Option", base.DEC, opt_types)
f.optlen = ProtoField.uint16("vitcp.ce.option.length", "Option Length")
f.payload = ProtoField.bytes("vitcp.payload", "Payload")
f.paylen = ProtoField.uint32("vitcp.payload_len", "Payload Length")
f.crc = ProtoField.uint32("vitcp.crc", "CRC", base.HEX)

p.prefs.ports = Pref.range("TCP ports", "7447-7455", "VI/TCP ports (VIPL's well-known port and its NICs')", 65535)

local HDR = 24

-- the CE header and its options; returns whether the CRC option was present
local function ce(buf, t, at, stop)
  local c = t:add(p, buf(at, stop - at), "CE Header")
  local a = c:add(f.attrs, buf(at, 2))
  for _, b in ipairs({ f.a_ur, f.a_rd, f.a_rr, f.a_rwe, f.a_rre, f.a_dfc, f.a_p2p }) do
    a:add(b, buf(at, 2))
  end
  local cl, dl = buf(at + 2, 2):uint(), buf(at + 74, 2):uint()
  c:add(f.callinglen, buf(at + 2, 2))
  c:add(f.mtu, buf(at + 4, 4))
  c:add(f.calling, buf(at + 8, math.min(cl, 64) > 0 and math.min(cl, 64) or 64))
  c:add(f.window, buf(at + 72, 2))
  c:add(f.calledlen, buf(at + 74, 2))
  c:add(f.called, buf(at + 76, math.min(dl, 64) > 0 and math.min(dl, 64) or 64))
  local i, crc = at + 140, false
  while i + 2 <= stop do
    local ot = buf(i, 2):uint()
    local o = c:add(f.opt, buf(i, 2))
    if ot == 0 then break end
    if i + 4 > stop then break end
    local ol = buf(i + 2, 2):uint()
    o:add(f.optlen, buf(i + 2, 2))
    if ot == 1 then crc = true end
    if ol < 4 then break end
    i = i + ol
  end
  return crc
end

-- §3.6: a connection has the CRC on once its ConnectRequest and its ConnectAccept both carried
-- the option; from then on every segment ends in a trailer. Keyed by the stream's two ends.
local crc_conns = {}
local function conn_key(pinfo)
  local a = tostring(pinfo.src) .. ":" .. pinfo.src_port
  local b = tostring(pinfo.dst) .. ":" .. pinfo.dst_port
  if a < b then return a .. "-" .. b end
  return b .. "-" .. a
end

local function note_ce(pinfo, ty, crc)
  local k = conn_key(pinfo)
  if ty == 5 then
    crc_conns[k] = crc and "asked" or nil
  elseif ty == 6 then
    crc_conns[k] = (crc and crc_conns[k] == "asked") and "on" or nil
  end
end

local function segment(buf, pinfo, tree)
  local len = buf(2, 2):uint()
  local flags = buf(1, 1):uint()
  local ty = bit.band(flags, 0x1F)
  local t = tree:add(p, buf(0, len), "VI/TCP " .. (types[ty] or ("type " .. ty)))
  local h = t:add(p, buf(0, HDR), "Segment Header")
  h:add(f.version, buf(0, 1))
  local fl = h:add(f.flags, buf(1, 1))
  fl:add(f.eom, buf(1, 1)); fl:add(f.idv, buf(1, 1)); fl:add(f.tre, buf(1, 1))
  fl:add(f.type, buf(1, 1))
  h:add(f.seglen, buf(2, 2))
  h:add(f.offset, buf(4, 4))
  h:add(f.imm, buf(8, 4))
  h:add(f.msgno, buf(12, 4))
  h:add(f.ack, buf(16, 4))
  h:add(f.rxposted, buf(20, 2))
  local e = h:add(f.rerr, buf(22, 2))
  e:add(f.iserr, buf(22, 2)); e:add(f.ute, buf(22, 2)); e:add(f.vde, buf(22, 2))
  e:add(f.mpe, buf(22, 2))
  local at = HDR
  if (ty == 1 or ty == 2) and len >= HDR + 16 then
    local r = t:add(p, buf(at, 16), "RDMA Header")
    r:add(f.raddr, buf(at, 8)); r:add(f.rhandle, buf(at + 8, 4)); r:add(f.rlen, buf(at + 12, 4))
    at = at + 16
  end
  if (ty == 5 or ty == 6) and len >= HDR + 140 then
    -- with the CRC option, the last four octets are the trailer (Segment Length counts it)
    local stop = len
    local crc = ce(buf, t, at, len)
    note_ce(pinfo, ty, crc)
    if crc then
      stop = len - 4
      t:add(f.crc, buf(stop, 4))
    end
    at = stop
  elseif ty == 7 and len >= HDR + 140 then
    -- softrnic's redirection (docs/vipl.md D276): a CE header with the redirect option
    ce(buf, t, at, len)
    at = len
  elseif (ty == 7 or ty == 8) and len == HDR + 4 then
    t:add(f.crc, buf(HDR, 4))
    at = len
  end
  local stop = len
  if ty <= 4 and crc_conns[conn_key(pinfo)] == "on" and len >= at + 4 then
    stop = len - 4
    t:add(f.crc, buf(stop, 4))
  end
  t:add(f.paylen, stop - at):set_generated()
  if stop > at then t:add(f.payload, buf(at, stop - at)) end
  pinfo.cols.info:append((types[ty] or "?") .. " ")
  return len
end

local function seg_len(buf, pinfo, offset)
  return buf(offset + 2, 2):uint()
end

local function dissect_one(buf, pinfo, tree)
  pinfo.cols.protocol = "VI/TCP"
  return segment(buf, pinfo, tree)
end

function p.dissector(buf, pinfo, tree)
  if pinfo.cols.protocol ~= "VI/TCP" then pinfo.cols.info:set("") end
  dissect_tcp_pdus(buf, tree, 4, seg_len, dissect_one, true)
  return buf:len()
end

local registered = nil
function p.init()
  crc_conns = {}
  local tcp = DissectorTable.get("tcp.port")
  if registered ~= nil then tcp:remove(registered, p) end
  registered = p.prefs.ports
  tcp:add(registered, p)
end
