-- The lua workload (lua.yaml): lua5.4 lua-work.lua SCALE ID. Tables of records built and
-- dropped, strings concatenated and formatted, closures: the garbage collector's churn of small,
-- short-lived objects, and tables that grow (realloc). Prints ID and a checksum that depends on
-- SCALE only.
local scale, id = tonumber(arg[1]), arg[2]
local sum = 0
for round = 1, 6 * scale do
    local t = {}
    for i = 1, 400 do
        t[i] = { key = string.format("k%d_%d", round, i), value = i * round, tags = { i % 7, i % 11 } }
    end
    local parts = {}
    for i = 1, #t, 3 do
        parts[#parts + 1] = t[i].key .. "=" .. tostring(t[i].value)
    end
    local s = table.concat(parts, ";")
    sum = (sum + #s + #t[#t].tags) % 1000000007
    local f = function(x) return x * round % 97 end
    for i = 1, 200 do
        sum = (sum + f(i)) % 1000000007
    end
end
print(id .. " " .. sum)
